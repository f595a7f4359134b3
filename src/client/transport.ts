/**
 * The fetch a client sends through: the caller's, the global one, or (Node, `ca` option) one
 * that trusts a private CA on connections of its own, which `close()` releases.
 */
import { DriverError } from '../protocol/errors.js';

export interface TransportOptions {
  /** A fetch implementation; default: the global fetch. */
  fetch?: typeof fetch;
  /** Node only: PEM certificate(s) of a private CA this client trusts in addition to the system roots. */
  ca?: string | readonly string[];
}

export interface Transport {
  fetch: typeof fetch;
  /** Closes the connections this client opened itself (none with a caller's or the global fetch). */
  close(): Promise<void>;
}

// A variable specifier keeps bundlers from pulling the Node-only module into browser builds.
const NODE_CA_MODULE = './node-ca.js';

export async function openTransport(options: TransportOptions): Promise<Transport> {
  if (options.ca !== undefined) {
    if (options.fetch) throw new DriverError('INVALID_ARGUMENT', 'Pass either fetch or ca, not both.');
    if (typeof process === 'undefined' || !process.versions?.node) {
      throw new DriverError('UNSUPPORTED_ENVIRONMENT', 'The ca option needs Node; browsers trust the platform certificate store.');
    }
    const { transportTrustingCa } = (await import(NODE_CA_MODULE)) as typeof import('./node-ca.js');
    return transportTrustingCa(options.ca);
  }
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw new DriverError('UNSUPPORTED_ENVIRONMENT', 'No fetch implementation is available; pass one as options.fetch.');
  return { fetch: options.fetch ? fetchImpl : fetchImpl.bind(globalThis), close: async () => undefined };
}
