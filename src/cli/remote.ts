/** `status` and `run`: the CLI as a client of a running host, using the TypeScript client. */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { AgenticClient } from '../client/index.js';
import { readClientConfig, resolveConfigPath, type HostConfig } from '../host/config-file.js';
import type { UsageConfig } from '../extensions/usage/config.js';
import { nodeFetch } from './node-fetch.js';
import { readSecret } from '../shared/secrets.js';
import { usageReportOf } from '../host/host-record.js';
import { DriverError } from '../protocol/errors.js';
import { findHostAddress, locateError, type HostAddress } from './host-address.js';
import type { RunRequest, RunResult } from '../protocol/schemas.js';
import { fields, healthText, printJson, printLines, table, usageLine, wantsJson } from './output.js';

export interface ClientOptions {
  config?: string;
  url?: string;
  tokenId?: string;
}

const MAX_STDIN_BYTES = 400_000;

/** The host this command dials (one per CLI process), so that its connection errors can say where the URL came from. */
let address: HostAddress | undefined;

/** Where the host is and how to talk to it (the URL, the token, a transport trusting its certificate), and the config it came from. */
export async function connection(options: ClientOptions): Promise<{ url: string; token: string; fetch: typeof fetch; config: HostConfig }> {
  const config = await readClientConfig(resolveConfigPath(options.config));
  const entry = options.tokenId ? config.tokens.find((token) => token.id === options.tokenId) : config.tokens[0];
  if (!entry) throw new DriverError('INVALID_ARGUMENT', `No token entry named ${options.tokenId}.`);
  const token = await readSecret(entry.tokenRef, config.configDir);
  address = await findHostAddress(config, options.url);
  const ca = await trustedCertificate(config);
  return { url: address.url, token, fetch: nodeFetch(ca), config };
}

export async function connect(options: ClientOptions): Promise<AgenticClient> {
  const { url, token, fetch } = await connection(options);
  return new AgenticClient({ url, token, fetch });
}

/** A client failure as the command reports it: connection errors name the URL's source. */
export function located(error: DriverError): DriverError {
  return locateError(error, address);
}

/** A host with its own TLS identity is trusted by that certificate (self-signed or a private CA chain). */
async function trustedCertificate(config: HostConfig): Promise<string | undefined> {
  const certFile = config.listen.tls?.certFile;
  if (!certFile) return undefined;
  return readFile(isAbsolute(certFile) ? certFile : resolve(config.configDir, certFile), 'utf8');
}

export function unreachable(error: unknown): never {
  if (error instanceof DriverError) throw located(error);
  throw located(new DriverError('HOST_UNREACHABLE', 'The host could not be reached.', { retryable: true }));
}

export async function statusCommand(options: ClientOptions & { refresh?: boolean; json?: boolean }): Promise<void> {
  const host = await connection(options);
  const client = new AgenticClient({ url: host.url, token: host.token, fetch: host.fetch });
  const [protocol, providers] = await Promise.all([client.protocol(), client.providers({ refresh: options.refresh ?? false })]).catch(unreachable);
  const config = host.config;
  const report = { protocol, providers, usage: await usageReportOf(config, config.usage as UsageConfig | undefined) };
  if (wantsJson(options)) return printJson(report);
  printLines([
    ...fields([
      ['host', `${host.url} (protocol ${protocol.version})`],
      ['features', protocol.features.join(', ')],
      ['usage sinks', usageLine(report.usage)],
    ]),
    '',
    ...(providers.length === 0
      ? ['This token may use no provider.']
      : table(
          ['provider', 'vendor', 'health', 'models'],
          providers.map((provider) => [provider.id, provider.vendor, healthText(provider.health), (provider.models ?? []).join(', ')]),
        )),
  ]);
}

export async function runCommand(
  options: ClientOptions & { provider: string; model: string; input?: string; idleTimeoutMs?: number; idempotencyKey?: string; session?: string; retrieval?: string; json?: boolean },
): Promise<void> {
  const input = options.input ?? (await readStdin());
  const request: RunRequest = { provider: options.provider, model: options.model, input };
  if (options.idleTimeoutMs !== undefined) request.idleTimeoutMs = options.idleTimeoutMs;
  if (options.idempotencyKey !== undefined) request.idempotencyKey = options.idempotencyKey;
  if (options.session !== undefined) request.session = sessionBinding(options.session);
  if (options.retrieval !== undefined) request.retrieval = { corpus: options.retrieval };
  const client = await connect(options);
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  let streamed = false;
  try {
    for await (const event of client.stream(request, { signal: controller.signal })) {
      if (options.json) process.stdout.write(`${JSON.stringify(event)}\n`);
      else if (event.type === 'text.delta') {
        process.stdout.write(event.text);
        streamed = true;
      } else if (event.type === 'run.completed') {
        if (!streamed) process.stdout.write(event.result.text);
        if (event.result.sources?.length) process.stdout.write(`\n\n${formatSources(event.result.sources)}`);
      }
      // The revision the next turn continues from (stdout keeps only the answer).
      if (event.type === 'run.completed' && event.result.session && !options.json) {
        process.stderr.write(`session ${event.result.session.id}:${event.result.session.revision} (continue with --session ${event.result.session.id}:${event.result.session.revision})\n`);
      }
      if (event.type === 'run.failed' || event.type === 'run.cancelled') throw DriverError.from(event.error);
    }
    if (!options.json) process.stdout.write('\n');
  } catch (error) {
    // Never a new key: the same key replays what the host recorded, so nothing runs twice.
    const uncertain = controller.signal.aborted || !(error instanceof DriverError) || (error.outcome === 'uncertain' && error.code !== 'OPERATION_UNCERTAIN');
    if (options.idempotencyKey !== undefined && uncertain) {
      process.stderr.write(`To learn how the run ended without running it again, repeat this command with the same --idempotency-key ${options.idempotencyKey}.\n`);
    }
    if (controller.signal.aborted) throw new DriverError('CANCELLED', 'The run was interrupted.', { outcome: 'uncertain' });
    unreachable(error);
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
}

/** `Sources:` and one line per manifest: the cited id, the title or document, and where in it. */
export function formatSources(sources: NonNullable<RunResult['sources']>): string {
  const lines = sources.map((source) => {
    const where = source.location ?? {};
    const document = source.title ?? where.documentId ?? source.id;
    const place = [
      where.section ? `§ ${where.section}` : undefined,
      where.page !== undefined ? `p. ${where.page}${where.pageEnd !== undefined && where.pageEnd !== where.page ? `-${where.pageEnd}` : ''}` : undefined,
      where.startLine !== undefined ? `lines ${where.startLine}-${where.endLine ?? where.startLine}` : undefined,
      where.messageId ? `message ${where.messageId}` : undefined,
    ].filter((part) => part !== undefined);
    return `  [source:${source.id}] ${document}${place.length > 0 ? ` (${place.join(', ')})` : ''}`;
  });
  return `Sources:\n${lines.join('\n')}`;
}

/** `ID:REVISION`, as `sessions create` prints it. */
function sessionBinding(value: string): { id: string; revision: number } {
  const match = /^([0-9a-fA-F-]{36}):(0|[1-9][0-9]{0,15})$/.exec(value);
  if (!match) throw new DriverError('INVALID_ARGUMENT', '--session must be ID:REVISION (e.g. 1b4e…:0).');
  return { id: match[1]!, revision: Number(match[2]) };
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_STDIN_BYTES) throw new DriverError('INVALID_ARGUMENT', `The input on stdin exceeds ${MAX_STDIN_BYTES} bytes.`);
    chunks.push(chunk as Buffer);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new DriverError('INVALID_ARGUMENT', 'The input on stdin is not valid UTF-8.');
  }
}
