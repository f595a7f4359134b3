/**
 * Which host a client command talks to, and where that URL came from: `--url`, else the record
 * the running host keeps in its state directory (`host.json`: its real URL, also after
 * `serve --port`), else `listen` in the config. A failed connection names the source and how
 * to change it, so a command never silently talks to whatever else listens on the config's port.
 */
import { DriverError } from '../protocol/errors.js';
import type { HostConfig } from '../host/config.js';
import { hostUrl } from '../host/host-url.js';
import { findRecordedHost } from '../host/host-record.js';

export interface HostAddress {
  url: string;
  /** Where the URL came from, for messages. */
  source: string;
  /** How to change it, for messages. */
  change: string;
}

export async function findHostAddress(config: HostConfig, explicitUrl: string | undefined): Promise<HostAddress> {
  if (explicitUrl !== undefined) {
    return { url: explicitUrl, source: '--url', change: 'Check it, or leave --url out to reach the host that runs with this config.' };
  }
  const { found, stale } = await findRecordedHost(config);
  if (found) {
    return {
      url: found.record.url,
      source: `${found.path}, written by the host running with this config (pid ${found.record.pid})`,
      change: `That host is not answering there; restart it (agenticdriver serve --config ${config.configPath}), or pass --url.`,
    };
  }
  const recorded = stale[0] ? `${stale[0].path} names pid ${stale[0].pid}, which is not running on this machine` : `no running host is recorded in ${config.stateDirectory}`;
  return {
    url: hostUrl(config.listen.host, config.listen.port, config.listen.tls !== undefined),
    source: `listen.host and listen.port in ${config.configPath} (${recorded})`,
    change: `Start the host with \`agenticdriver serve --config ${config.configPath}\`, or pass --url with the URL it printed.`,
  };
}

/** Codes that mean "this URL did not lead to our host": the message gets the URL's source. */
const CONNECTION_CODES = new Set(['HOST_UNREACHABLE', 'TIMEOUT', 'HTTP_ERROR', 'UNSUPPORTED_PROTOCOL_VERSION', 'INVALID_RESPONSE', 'RESPONSE_TOO_LARGE', 'INVALID_STREAM', 'UNAUTHORIZED']);

/** The error, with where the URL came from and how to change it when it is a connection error. */
export function locateError(error: DriverError, address: HostAddress | undefined): DriverError {
  if (!address || !CONNECTION_CODES.has(error.code)) return error;
  const message = `${error.message.replace(/\.?$/, '.')} The URL ${address.url} comes from ${address.source}. ${address.change}`;
  return new DriverError(error.code, message, { retryable: error.retryable, ...(error.outcome ? { outcome: error.outcome } : {}), cause: error });
}
