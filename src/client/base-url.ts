/**
 * Base URL rules, the same in every client (protocol/fixtures/base-url.json): an absolute
 * http(s) URL (else INVALID_URL); https, or http on a loopback host literal (the host's own
 * rule, src/shared/addresses.ts); no credentials, query or fragment (else INSECURE_TRANSPORT);
 * a path prefix is kept.
 */
import { DriverError } from '../protocol/errors.js';
import { isLoopbackHost } from '../shared/addresses.js';

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
  if (url.protocol === 'http:' && !isLoopbackHost(writtenHost(value))) {
    throw new DriverError('INSECURE_TRANSPORT', 'Plain http is allowed only for loopback hosts; use https.');
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

/**
 * The host as written in the URL text (brackets of an IPv6 literal dropped), not as the URL
 * parser normalized it: `http://127.1/` is the name "127.1", not the address 127.0.0.1.
 */
function writtenHost(value: string): string {
  const authority = /^\s*[a-z][a-z0-9+.-]*:[/\\]{2}([^/\\?#]*)/i.exec(value)?.[1] ?? '';
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  return host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d*$/, '');
}
