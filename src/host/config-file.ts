/**
 * The config file, read and checked for what every reader needs: versioned JSON, validated
 * strictly, secrets by reference only. The core fields (listen, providers, tokens, origins,
 * limits, state) are checked here, each provider entry against its kind's schema compiled
 * ahead of time. Which extensions check their sections further is the caller's to say:
 * `./config.ts` passes the host's list (`parseHostConfig`); a client command passes none
 * (`readClientConfig`), so that finding and reaching its host loads no extension code.
 */
import { open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { DriverError } from '../protocol/errors.js';
import { describe, type SchemaError } from '../protocol/validate.js';
import { isLoopbackHost, normalizeOrigin } from '../shared/addresses.js';
import type { SecretRef } from '../shared/secrets.js';
import type { TokenEntry } from '../http/access.js';
import type { CoreConfig, Extension } from '../http/extension.js';
import type { HostLimits, ListenConfig, PostgresStateConfig, SqliteStateConfig } from './config-schema.js';
import * as compiled from '../../protocol/validators/host-config.js';
import { DEFAULT_PORT } from './config-constants.js';

export type { HostLimits, TokenEntry };

const MAX_CONFIG_BYTES = 1_000_000;

export interface ProviderEntry {
  kind: string;
  id: string;
  models: string[];
  [field: string]: unknown;
}

/** The parsed config: the core fields, and each extension's section (as it keeps it) under its id. */
export interface HostConfig extends CoreConfig {
  version: 1;
  listen: ListenConfig;
  providers: ProviderEntry[];
  tokens: TokenEntry[];
  allowedOrigins: string[];
  limits: HostLimits;
  /** Where durable state lives: SQLite files in a directory, or a shared PostgreSQL database. */
  state: { engine: 'sqlite'; directory: string } | { engine: 'postgres'; urlRef: SecretRef };
  /** Absolute directory for SQLite state (with PostgreSQL, the default `state` folder). */
  stateDirectory: string;
  stateLeaseMs: number | undefined;
  /** Absolute directory of the config file; relative paths resolve against it. */
  configDir: string;
  configPath: string;
  /** The extensions' sections, by extension id (`sectionOf` reads one typed). */
  [section: string]: unknown;
}

/** An extension's section of a parsed config, typed by its schema. */
export function sectionOf<C>(config: HostConfig, extension: Extension<C>): C | undefined {
  return config[extension.id] as C | undefined;
}

/** A compiled schema check. */
export interface Validator {
  (value: unknown): boolean;
  errors?: readonly SchemaError[] | null;
}

const stateValidators = { sqlite: compiled.sqliteState, postgres: compiled.postgresState };

function configError(message: string, code = 'INVALID_CONFIG'): DriverError {
  return new DriverError(code, message);
}

/** A value the schema refuses, at a JSON pointer into the config (so a file's line can be named). */
export class ConfigProblem extends DriverError {
  constructor(
    message: string,
    readonly pointer: string,
  ) {
    super('INVALID_CONFIG', message);
  }
}

/** The first schema error, `prefix` prepended to its path; `note` says which form was meant. */
function schemaProblem(errors: readonly SchemaError[] | null | undefined, prefix = '', note = ''): ConfigProblem {
  const first = errors?.[0];
  const shifted = first ? [{ ...first, instancePath: `${prefix}${first.instancePath}` }] : null;
  return new ConfigProblem(`The config is invalid: ${describe(shifted)}${note}.`, shifted?.[0]?.instancePath ?? prefix);
}

const PROVIDER_KIND_NAMES = Object.keys(compiled.PROVIDER_ENTRIES);

/**
 * Each provider entry checked against the form its `kind` names, so a mistake reads as one
 * (the union alone reports the first kind's complaint: "/providers/1/kind must be equal to constant").
 */
function checkProviderEntries(raw: unknown): void {
  const providers = isObject(raw) ? raw.providers : undefined;
  if (!Array.isArray(providers)) return; // the schema reports it
  providers.forEach((entry: unknown, index) => {
    if (!isObject(entry)) return;
    const where = `/providers/${index}`;
    const kind = entry.kind;
    if (typeof kind !== 'string') throw new ConfigProblem(`The config is invalid: ${where} needs a "kind": one of ${PROVIDER_KIND_NAMES.join(', ')}.`, where);
    const validate = compiled.PROVIDER_ENTRIES[kind];
    if (!validate) throw new ConfigProblem(`The config is invalid: ${where}/kind ${JSON.stringify(kind)} is not a provider kind; use one of ${PROVIDER_KIND_NAMES.join(', ')}.`, `${where}/kind`);
    if (!validate(entry)) throw schemaProblem(validate.errors, where, ` (a provider of kind ${kind})`);
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The config path: `--config`, then `AGENTICDRIVER_CONFIG`, then the per-user default. */
export function resolveConfigPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return resolve(explicit);
  if (env.AGENTICDRIVER_CONFIG) return resolve(env.AGENTICDRIVER_CONFIG);
  if (process.platform === 'win32') return join(env.APPDATA || join(homedir(), 'AppData', 'Roaming'), 'agenticdriver', 'config.json');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'agenticdriver', 'config.json');
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'agenticdriver', 'config.json');
}

/** The config file's text: a regular file of at most 1 MB of UTF-8. */
export async function readConfigText(path: string): Promise<string> {
  try {
    const handle = await open(path, 'r');
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw configError(`The config at ${path} is not a regular file.`);
      if (info.size > MAX_CONFIG_BYTES) throw configError(`The config at ${path} is larger than ${MAX_CONFIG_BYTES} bytes.`);
      return new TextDecoder('utf-8', { fatal: true }).decode(await handle.readFile());
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof DriverError) throw error;
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw configError(missing ? `No config file at ${path}.` : `The config at ${path} could not be read as UTF-8 text.`, missing ? 'CONFIG_NOT_FOUND' : 'INVALID_CONFIG');
  }
}

/**
 * A config file's text, parsed by `parse`: a syntax error names its line and column, and so
 * does a value the schema refuses.
 */
export async function parseConfigText(text: string, path: string, parse: (raw: unknown, path: string) => HostConfig): Promise<HostConfig> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    const { describeSyntaxError } = await import('./config-text.js');
    const where = describeSyntaxError(text);
    throw configError(`The config at ${path} is not valid JSON${where ? `: ${where}` : ''}.`);
  }
  try {
    return parse(raw, path);
  } catch (error) {
    if (!(error instanceof ConfigProblem)) throw error;
    const { locatePointer } = await import('./config-text.js');
    const position = locatePointer(text, error.pointer);
    throw position ? configError(`${error.message.replace(/\.$/, '')} (${path}, line ${position.line}, column ${position.column}).`) : error;
  }
}

/**
 * The config as a client command needs it, to find and reach its host: checked against the
 * host's compiled schema (every section's form included) and for the core fields' rules, its
 * sections kept as written; the extensions' own checks are the host's, when it starts.
 */
export async function readClientConfig(path: string): Promise<HostConfig> {
  return parseConfigText(await readConfigText(path), path, (raw, at) => parseConfig(raw, at, compiled.hostConfig, undefined));
}

/**
 * Checks a parsed config object against `validate` and the core fields' rules; `path` anchors
 * relative paths. With `extensions`, each one's token fields and section are checked by its own
 * code and its section kept as it reads it; without, every section is kept as written.
 */
export function parseConfig(raw: unknown, path: string, validate: Validator, extensions: readonly Extension[] | undefined): HostConfig {
  if (hasProtoKey(raw)) throw configError('The config contains a "__proto__" key.');
  checkProviderEntries(raw);
  checkState(raw);
  if (!validate(raw)) throw schemaProblem(validate.errors);
  const input = raw as {
    listen?: HostConfig['listen'];
    providers: ProviderEntry[];
    tokens: TokenEntry[];
    allowedOrigins?: string[];
    limits?: HostLimits;
    state?: SqliteStateConfig | PostgresStateConfig;
    [section: string]: unknown;
  };
  const configPath = resolve(path);
  const configDir = dirname(configPath);

  const providerIds = new Set<string>();
  input.providers.forEach((provider, index) => {
    if (providerIds.has(provider.id)) throw new ConfigProblem(`Provider id ${provider.id} is used twice.`, `/providers/${index}/id`);
    providerIds.add(provider.id);
  });
  const tokenIds = new Set<string>();
  input.tokens.forEach((token, index) => {
    if (tokenIds.has(token.id)) throw new ConfigProblem(`Token id ${token.id} is used twice.`, `/tokens/${index}/id`);
    tokenIds.add(token.id);
    token.providers.forEach((provider, grant) => {
      if (!providerIds.has(provider)) throw new ConfigProblem(`Token ${token.id} grants provider ${provider}, which is not configured.`, `/tokens/${index}/providers/${grant}`);
    });
    for (const extension of extensions ?? []) {
      for (const [field, grant] of Object.entries(extension.grants ?? {})) {
        if (token[field] === undefined || !grant.check) continue;
        try {
          grant.check(token[field], token.id);
        } catch (error) {
          if (error instanceof DriverError && error.code === 'INVALID_CONFIG') throw new ConfigProblem(error.message, `/tokens/${index}/${field}`);
          throw error;
        }
      }
    }
  });
  checkLimits(input.limits, tokenIds, providerIds);
  const allowedOrigins = (input.allowedOrigins ?? []).map((entry, index) => {
    const origin = normalizeOrigin(entry);
    if (!origin) throw new ConfigProblem(`allowedOrigins[${index}] is not an origin (scheme://host[:port]).`, `/allowedOrigins/${index}`);
    return origin;
  });
  const sections: Record<string, unknown> = {};
  if (extensions) {
    for (const extension of extensions) {
      const section = input[extension.id];
      if (section === undefined) continue;
      extension.checkConfig?.(section);
      sections[extension.id] = extension.readConfig ? extension.readConfig(section) : section;
    }
  } else {
    for (const [key, section] of Object.entries(input)) if (!CORE_FIELDS.has(key)) sections[key] = section;
  }
  const listen = input.listen ?? { host: '127.0.0.1', port: DEFAULT_PORT };
  assertListenerSecure(listen);
  return {
    ...sections,
    version: 1,
    listen,
    providers: input.providers,
    tokens: input.tokens,
    allowedOrigins: [...new Set(allowedOrigins)],
    limits: input.limits ?? {},
    state: stateOf(input.state, configDir),
    stateDirectory: resolve(configDir, (input.state?.engine !== 'postgres' && input.state?.directory) || 'state'),
    stateLeaseMs: input.state?.leaseMs,
    configDir,
    configPath,
  };
}

/** What the schema cannot say of `limits`: a real time zone, budgets that cap something, tokens and providers that exist. */
function checkLimits(limits: HostLimits | undefined, tokenIds: ReadonlySet<string>, providerIds: ReadonlySet<string>): void {
  if (!limits) return;
  if (limits.timeZone !== undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: limits.timeZone });
    } catch {
      throw new ConfigProblem(`limits.timeZone ${JSON.stringify(limits.timeZone)} is not an IANA time zone.`, '/limits/timeZone');
    }
  }
  for (const id of Object.keys(limits.tokens ?? {})) {
    if (!tokenIds.has(id)) throw new ConfigProblem(`limits.tokens names token ${id}, which is not configured.`, `/limits/tokens/${id}`);
  }
  for (const id of Object.keys(limits.providers ?? {})) {
    if (!providerIds.has(id)) throw new ConfigProblem(`limits.providers names provider ${id}, which is not configured.`, `/limits/providers/${id}`);
  }
  const rules = [
    ...(limits.host ? [['/limits/host', limits.host] as const] : []),
    ...Object.entries(limits.subjects ?? {}).map(([name, rule]) => [`/limits/subjects/${name}`, rule] as const),
    ...Object.entries(limits.tokens ?? {}).map(([name, rule]) => [`/limits/tokens/${name}`, rule] as const),
    ...Object.entries(limits.providers ?? {}).map(([name, rule]) => [`/limits/providers/${name}`, rule] as const),
  ];
  for (const [pointer, rule] of rules) {
    rule.budgets?.forEach((budget, index) => {
      if (budget.usd === undefined && budget.tokens === undefined) throw new ConfigProblem('A budget caps usd, tokens or both.', `${pointer}/budgets/${index}`);
    });
  }
}

/** The config's own fields; every other top-level key is an extension's section. */
const CORE_FIELDS: ReadonlySet<string> = new Set(['$schema', 'version', 'listen', 'providers', 'tokens', 'allowedOrigins', 'limits', 'state']);

function stateOf(state: SqliteStateConfig | PostgresStateConfig | undefined, configDir: string): HostConfig['state'] {
  if (state?.engine === 'postgres') return { engine: 'postgres', urlRef: state.urlRef };
  return { engine: 'sqlite', directory: resolve(configDir, state?.directory ?? 'state') };
}

/**
 * `state` checked against the form its `engine` names, so a mistake reads as one (the union
 * alone would report the first form's complaint, e.g. an unknown field urlRef for sqlite).
 */
function checkState(raw: unknown): void {
  const state = isObject(raw) ? raw.state : undefined;
  if (!isObject(state)) return; // the schema reports it
  const engine = state.engine ?? 'sqlite';
  if (engine !== 'sqlite' && engine !== 'postgres') throw new ConfigProblem('The config is invalid: /state/engine must be "sqlite" or "postgres".', '/state/engine');
  const validate = stateValidators[engine];
  if (validate(state)) return;
  throw schemaProblem(validate.errors, '/state', engine === 'postgres' ? ' (postgres takes urlRef only: {"env": …} or {"file": …})' : '');
}

/** A listener off loopback must serve TLS (docs/architecture.md, decisions: Loopback). */
export function assertListenerSecure(listen: { host: string; tls?: unknown }): void {
  if (!listen.tls && !isLoopbackHost(listen.host)) {
    throw configError(`Listening on ${listen.host} requires TLS; configure listen.tls or bind a loopback address.`, 'TLS_REQUIRED');
  }
}

function hasProtoKey(value: unknown, depth = 0): boolean {
  if (depth > 32 || value === null || typeof value !== 'object') return false;
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return true;
  return Object.values(value).some((child) => hasProtoKey(child, depth + 1));
}
