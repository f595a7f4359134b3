/**
 * `agenticdriver doctor`: validates the config, resolves every secret and the TLS
 * identity, then probes each provider (never a generation call). Prints no secrets.
 */
import { TokenAuthenticator } from '../host/auth.js';
import { readHostConfig, resolveConfigPath, type HostConfig } from '../host/config.js';
import { loadTls } from '../host/index.js';
import { createProviders } from '../host/providers.js';
import { systemClock } from '../shared/clock.js';
import { readSecret } from '../shared/secrets.js';
import { PostgresEngine } from '../store/postgres/postgres-engine.js';
import { ProviderDiscovery } from '../runtime/discovery.js';
import type { ProviderHealth } from '../protocol/schemas.js';
import type { UsageSinkReport } from '../extensions/usage/report.js';
import { usageReportOf } from '../host/host-record.js';
import { rankingOf } from '../extensions/retrieval/service.js';
import { BUILTIN_EMBEDDING, embedderId } from '../providers/embeddings/index.js';
import { fields, healthText, printJson, printLines, table, usageLine, wantsJson } from './output.js';

export interface DoctorReport {
  ok: boolean;
  configPath: string;
  configuration: 'valid';
  listener: { host: string; port: number; tls: boolean };
  tokens: number;
  providers: { id: string; kind: string; models: string[]; health: ProviderHealth; version?: string }[];
  /** The usage sinks' last health and the webhook spool (USAGESTAT_ERROR / USAGESTAT_SCHEMA show here). */
  usage: UsageSinkReport;
  /** SQLite: where the file lives. PostgreSQL: whether the database answers (nothing is migrated). */
  state: { engine: 'sqlite'; directory: string } | { engine: 'postgres'; status: 'ready' | 'unavailable'; reason?: string };
  /** Scoped retrieval: the configured corpora (their embedder and ranking) and whether PDFs are ingested. */
  retrieval: { enabled: false } | { enabled: true; corpora: { id: string; namespace: 'shared' | 'subject'; embedder: string; ranking: 'bm25' | 'hybrid' | 'cosine' }[]; pdf: boolean; engine: string };
}

async function probeState(config: HostConfig): Promise<DoctorReport['state']> {
  if (config.state.engine === 'sqlite') return { engine: 'sqlite', directory: config.state.directory };
  try {
    const url = await readSecret(config.state.urlRef, config.configDir, process.env);
    if (!url) return { engine: 'postgres', status: 'unavailable', reason: 'The PostgreSQL URL (state.urlRef) is empty.' };
    const engine = await PostgresEngine.connect(url);
    await engine.close();
    return { engine: 'postgres', status: 'ready' };
  } catch (error) {
    // The engine's messages never carry the URL.
    return { engine: 'postgres', status: 'unavailable', reason: (error as Error).message };
  }
}

export async function doctor(explicitPath?: string): Promise<DoctorReport> {
  const configPath = resolveConfigPath(explicitPath);
  const config = await readHostConfig(configPath);
  await TokenAuthenticator.load(config.tokens, config.configDir);
  if (config.listen.tls) await loadTls(config, process.env);
  const adapters = createProviders(config, process.env);
  const discovery = new ProviderDiscovery(systemClock);
  const providers = await Promise.all(
    adapters.map(async (adapter, index) => {
      const { health, version } = await discovery.inspect(adapter, true);
      return { id: adapter.info.id, kind: config.providers[index]!.kind, models: adapter.info.models, health, ...(version === undefined ? {} : { version }) };
    }),
  );
  await Promise.allSettled(adapters.map((adapter) => adapter.close?.()));
  const usage = await usageReportOf(config);
  const state = await probeState(config);
  return {
    ok:
      usage.ok &&
      providers.every((provider) => provider.health.status === 'ready' || provider.health.status === 'unknown') &&
      !('status' in state && state.status === 'unavailable'),
    configPath,
    configuration: 'valid',
    listener: { host: config.listen.host, port: config.listen.port, tls: config.listen.tls !== undefined },
    tokens: config.tokens.length,
    providers,
    state,
    usage,
    retrieval: config.retrieval
      ? {
          enabled: true,
          corpora: config.retrieval.corpora.map((corpus) => ({
            id: corpus.id,
            namespace: corpus.namespace ?? 'shared',
            embedder: corpus.embedding ? embedderId(corpus.embedding) : BUILTIN_EMBEDDING.providerId,
            ranking: rankingOf(corpus),
          })),
          pdf: config.retrieval.pdf !== false,
          engine: config.state.engine === 'sqlite' ? 'sqlite-fts5' : 'postgres-fts',
        }
      : { enabled: false },
  };
}

/** `agenticdriver doctor`: the report as a table, or as JSON; exit 1 unless every check passed. */
export async function doctorCommand(options: { config?: string; json?: boolean }): Promise<void> {
  const report = await doctor(options.config);
  if (!report.ok) process.exitCode = 1;
  if (wantsJson(options)) return printJson(report);
  const state = report.state.engine === 'sqlite' ? `sqlite, ${report.state.directory}` : `postgres, ${report.state.status}${report.state.reason ? ` (${report.state.reason})` : ''}`;
  const retrieval = report.retrieval.enabled
    ? `${report.retrieval.engine}; corpora ${report.retrieval.corpora.map((corpus) => `${corpus.id} (${corpus.namespace})`).join(', ')}; PDF ${report.retrieval.pdf ? 'on' : 'off'}`
    : 'off';
  printLines([
    ...fields([
      ['config', `${report.configPath} (valid)`],
      ['listener', `${report.listener.host}:${report.listener.port}${report.listener.tls ? ' with TLS' : ''}`],
      ['tokens', String(report.tokens)],
      ['state', state],
      ['retrieval', retrieval],
      ['usage sinks', usageLine(report.usage)],
    ]),
    '',
    ...table(
      ['provider', 'kind', 'health', 'version', 'models'],
      report.providers.map((provider) => [provider.id, provider.kind, healthText(provider.health), provider.version ?? '', provider.models.join(', ')]),
    ),
    '',
    report.ok ? 'Every check passed.' : 'Not every check passed (see above); exit status 1.',
  ]);
}
