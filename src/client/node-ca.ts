/**
 * Node only: a fetch that trusts the system roots plus the given private CA, for this
 * client alone (no process-wide NODE_EXTRA_CA_CERTS). Loaded lazily so browser bundles
 * never see it.
 */
import { rootCertificates } from 'node:tls';
import { Agent, fetch as undiciFetch } from 'undici';

export function fetchTrustingCa(ca: string | readonly string[]): typeof fetch {
  const dispatcher = new Agent({ connect: { ca: [...rootCertificates, ...(typeof ca === 'string' ? [ca] : ca)] } });
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
}
