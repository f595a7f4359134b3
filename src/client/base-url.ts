/** Base URL rules: HTTPS except on loopback; no credentials, query or fragment; path prefix kept. */
import { DriverError } from '../protocol/errors.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function parseBaseUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new DriverError('INSECURE_TRANSPORT', 'The host URL is not a valid absolute URL.');
  }
  if (url.username || url.password) throw new DriverError('INSECURE_TRANSPORT', 'The host URL must not carry credentials; pass the token separately.');
  if (url.search || url.hash || value.includes('?') || value.includes('#')) {
    throw new DriverError('INSECURE_TRANSPORT', 'The host URL must not carry a query or fragment.');
  }
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname.toLowerCase())) {
    throw new DriverError('INSECURE_TRANSPORT', 'Plain http is allowed only for loopback hosts; use https.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new DriverError('INSECURE_TRANSPORT', 'The host URL must use https.');
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}
