/**
 * Base URL rules: an absolute http(s) URL (else INVALID_URL); HTTPS except on loopback, no
 * credentials, query or fragment (else INSECURE_TRANSPORT); path prefix kept.
 */
import { DriverError } from '../protocol/errors.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function parseBaseUrl(value: string): URL {
  let url: URL;
  const invalid = () => new DriverError('INVALID_URL', 'The host URL is not an absolute http(s) URL (e.g. http://127.0.0.1:7433).');
  try {
    url = new URL(value);
  } catch {
    throw invalid();
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid();
  if (url.username || url.password) throw new DriverError('INSECURE_TRANSPORT', 'The host URL must not carry credentials; pass the token separately.');
  if (url.search || url.hash || value.includes('?') || value.includes('#')) {
    throw new DriverError('INSECURE_TRANSPORT', 'The host URL must not carry a query or fragment.');
  }
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname.toLowerCase())) {
    throw new DriverError('INSECURE_TRANSPORT', 'Plain http is allowed only for loopback hosts; use https.');
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}
