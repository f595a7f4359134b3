/**
 * Node only: a fetch that trusts the system roots plus the given private CA, for this
 * client alone (no process-wide NODE_EXTRA_CA_CERTS), on a connection pool of its own.
 * Loaded lazily so browser bundles never see it.
 */
import { rootCertificates } from 'node:tls';
import { Agent, fetch as undiciFetch } from 'undici';

export function transportTrustingCa(ca: string | readonly string[]): { fetch: typeof fetch; close(): Promise<void> } {
  const dispatcher = new Agent({ connect: { ca: [...rootCertificates, ...(typeof ca === 'string' ? [ca] : ca)] } });
  const fetchImpl = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
  return { fetch: fetchImpl, close: () => dispatcher.close() };
}

/** Just the fetch (the caller never closes it): for tests and tools. */
export function fetchTrustingCa(ca: string | readonly string[]): typeof fetch {
  return transportTrustingCa(ca).fetch;
}
