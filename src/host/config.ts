/**
 * Host configuration: versioned JSON, validated strictly, secrets by reference only. The core
 * fields are here; each extension of the list adds its section and its token grant fields, as
 * each provider kind adds its entry (`protocol/host-config.schema.json` is generated from
 * `hostConfigSchema()`).
 */
import { open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { DriverError } from '../protocol/errors.js';
import { describe } from '../protocol/validate.js';
import { ProviderId, ToolName } from '../protocol/schemas.js';
import { PROVIDER_KINDS } from '../providers/kinds.js';
import { isLoopbackHost, normalizeOrigin } from '../shared/addresses.js';
import { SecretRef } from '../shared/secrets.js';
import type { GrantField, TokenEntry } from '../http/access.js';
import type { CoreConfig, Extension } from '../http/extension.js';
import { EXTENSIONS } from '../extensions/index.js';

export const DEFAULT_PORT = 7433;
export const DEFAULT_BODY_BYTES = 1_000_000;
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MAX_CONFIG_BYTES = 1_000_000;

const strict = { additionalProperties: false } as const;

const Listen = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 255 }),
    port: Type.Integer({ minimum: 0, maximum: 65_535 }),
    tls: Type.Optional(Type.Object({ certFile: Type.String({ minLength: 1, maxLength: 4096 }), keyRef: SecretRef }, strict)),
  },
  strict,
);


/** A token entry: who it is and what it may use; the extensions add their grant fields. */
const TOKEN_FIELDS = {
  id: ProviderId,
  subject: Type.String({ minLength: 1, maxLength: 128 }),
  tokenRef: SecretRef,
  providers: Type.Array(ProviderId, { maxItems: 32, uniqueItems: true }),
  tools: Type.Optional(Type.Array(ToolName, { maxItems: 32, uniqueItems: true })),
};

const Limits = Type.Object(
  {
    maxSteps: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536 })),
    idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
    maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
    maxBodyBytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: MAX_BODY_BYTES })),
    maxConcurrentRuns: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    maxConcurrentRunsPerSubject: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    /** How long an event-stream write may wait for a client that stopped reading (default 30 s). */
    writeStallTimeoutMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000 })),
    /** How long shutdown waits for active runs to deliver their terminal events (default 10 s). */
    shutdownGraceMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_600_000 })),
  },
  strict,
);

/** How long a replica's claim on its runs lasts without renewal (default 15 s). */
const LeaseMs = Type.Integer({ minimum: 300, maximum: 3_600_000 });

const SqliteState = Type.Object(
  {
    engine: Type.Optional(Type.Literal('sqlite')),
    /** Relative to the config file's folder; default `state`. */
    directory: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    leaseMs: Type.Optional(LeaseMs),
  },
  strict,
);

/** Several replicas share one PostgreSQL database; the URL (with its password) is a secret. */
const PostgresState = Type.Object({ engine: Type.Literal('postgres'), urlRef: SecretRef, leaseMs: Type.Optional(LeaseMs) }, strict);

/** The host config's schema: the core fields, then each extension's section, in the list's order. */
export function hostConfigSchema(extensions: readonly Extension[] = EXTENSIONS) {
  const providerEntries: TSchema[] = PROVIDER_KINDS.map((kind) => kind.configSchema);
  const grants = Object.fromEntries(extensions.flatMap((extension) => Object.entries(extension.grants ?? {}).map(([field, grant]) => [field, Type.Optional(grant.schema)])));
  const sections = Object.fromEntries(extensions.flatMap((extension) => (extension.configSchema ? [[extension.id, Type.Optional(extension.configSchema)]] : [])));
  return Type.Object(
    {
      $schema: Type.Optional(Type.String()),
      version: Type.Literal(1),
      listen: Type.Optional(Listen),
      providers: Type.Array(Type.Union(providerEntries), { minItems: 1, maxItems: 32 }),
      tokens: Type.Array(Type.Object({ ...TOKEN_FIELDS, ...grants }, strict), { minItems: 1, maxItems: 100 }),
      allowedOrigins: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 100 })),
      limits: Type.Optional(Limits),
      state: Type.Optional(Type.Union([SqliteState, PostgresState])),
      ...sections,
    },
    { ...strict, $id: 'https://agenticdriver.dev/schemas/host-config.json', title: 'agenticdriver host configuration' },
  );
}

export interface ProviderEntry {
  kind: string;
  id: string;
  models: string[];
  [field: string]: unknown;
}

export type { TokenEntry };
export type HostLimits = Static<typeof Limits>;

/** The parsed config: the core fields, and each extension's section (as it keeps it) under its id. */
export interface HostConfig extends CoreConfig {
  version: 1;
  listen: Static<typeof Listen>;
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

/** The token fields the extensions add, with the grants each gives. */
export function tokenGrants(extensions: readonly Extension[] = EXTENSIONS): Record<string, GrantField> {
  return Object.assign({}, ...extensions.map((extension) => extension.grants ?? {}));
}

/** An extension's section of a parsed config, typed by its schema. */
export function sectionOf<C>(config: HostConfig, extension: Extension<C>): C | undefined {
  return config[extension.id] as C | undefined;
}

const ajv = new Ajv2020({ strict: false, allErrors: false });
const validators = new WeakMap<readonly Extension[], ValidateFunction>();
const stateValidators = { sqlite: ajv.compile(SqliteState), postgres: ajv.compile(PostgresState) };

/** The validator of the config schema a list of extensions gives (each its own Ajv: the schema's `$id` is the same). */
function validatorOf(extensions: readonly Extension[]) {
  let validate = validators.get(extensions);
  if (!validate) validators.set(extensions, (validate = new Ajv2020({ strict: false, allErrors: false }).compile(hostConfigSchema(extensions))));
  return validate;
}

function configError(message: string, code = 'INVALID_CONFIG'): DriverError {
  return new DriverError(code, message);
}

/** The config path: `--config`, then `AGENTICDRIVER_CONFIG`, then the per-user default. */
export function resolveConfigPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return resolve(explicit);
  if (env.AGENTICDRIVER_CONFIG) return resolve(env.AGENTICDRIVER_CONFIG);
  if (process.platform === 'win32') return join(env.APPDATA || join(homedir(), 'AppData', 'Roaming'), 'agenticdriver', 'config.json');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'agenticdriver', 'config.json');
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'agenticdriver', 'config.json');
}

export async function readHostConfig(path: string): Promise<HostConfig> {
  let text: string;
  try {
    const handle = await open(path, 'r');
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw configError(`The config at ${path} is not a regular file.`);
      if (info.size > MAX_CONFIG_BYTES) throw configError(`The config at ${path} is larger than ${MAX_CONFIG_BYTES} bytes.`);
      text = new TextDecoder('utf-8', { fatal: true }).decode(await handle.readFile());
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof DriverError) throw error;
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw configError(missing ? `No config file at ${path}.` : `The config at ${path} could not be read as UTF-8 text.`, missing ? 'CONFIG_NOT_FOUND' : 'INVALID_CONFIG');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw configError(`The config at ${path} is not valid JSON.`);
  }
  return parseHostConfig(raw, path);
}

/** Validates a parsed config object; `path` anchors relative paths. */
export function parseHostConfig(raw: unknown, path: string, extensions: readonly Extension[] = EXTENSIONS): HostConfig {
  if (hasProtoKey(raw)) throw configError('The config contains a "__proto__" key.');
  checkState(raw);
  const validate = validatorOf(extensions);
  if (!validate(raw)) throw configError(`The config is invalid: ${describe(validate.errors)}.`);
  const input = raw as {
    listen?: HostConfig['listen'];
    providers: ProviderEntry[];
    tokens: TokenEntry[];
    allowedOrigins?: string[];
    limits?: HostLimits;
    state?: Static<typeof SqliteState> | Static<typeof PostgresState>;
    [section: string]: unknown;
  };
  const configPath = resolve(path);
  const configDir = dirname(configPath);

  const providerIds = new Set<string>();
  for (const provider of input.providers) {
    if (providerIds.has(provider.id)) throw configError(`Provider id ${provider.id} is used twice.`);
    providerIds.add(provider.id);
  }
  const tokenIds = new Set<string>();
  for (const token of input.tokens) {
    if (tokenIds.has(token.id)) throw configError(`Token id ${token.id} is used twice.`);
    tokenIds.add(token.id);
    for (const provider of token.providers) {
      if (!providerIds.has(provider)) throw configError(`Token ${token.id} grants provider ${provider}, which is not configured.`);
    }
    for (const extension of extensions) {
      for (const [field, grant] of Object.entries(extension.grants ?? {})) {
        if (token[field] !== undefined) grant.check?.(token[field], token.id);
      }
    }
  }
  const allowedOrigins = (input.allowedOrigins ?? []).map((entry, index) => {
    const origin = normalizeOrigin(entry);
    if (!origin) throw configError(`allowedOrigins[${index}] is not an origin (scheme://host[:port]).`);
    return origin;
  });
  const sections: Record<string, unknown> = {};
  for (const extension of extensions) {
    const section = input[extension.id];
    if (section === undefined) continue;
    extension.checkConfig?.(section);
    sections[extension.id] = extension.readConfig ? extension.readConfig(section) : section;
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

function stateOf(state: Static<typeof SqliteState> | Static<typeof PostgresState> | undefined, configDir: string): HostConfig['state'] {
  if (state?.engine === 'postgres') return { engine: 'postgres', urlRef: state.urlRef };
  return { engine: 'sqlite', directory: resolve(configDir, state?.directory ?? 'state') };
}

/**
 * `state` checked against the form its `engine` names, so a mistake reads as one (the union
 * alone would report the first form's complaint, e.g. an unknown field urlRef for sqlite).
 */
function checkState(raw: unknown): void {
  const state = raw !== null && typeof raw === 'object' ? (raw as { state?: unknown }).state : undefined;
  if (state === null || typeof state !== 'object' || Array.isArray(state)) return; // the schema reports it
  const engine = (state as { engine?: unknown }).engine ?? 'sqlite';
  if (engine !== 'sqlite' && engine !== 'postgres') throw configError('The config is invalid: /state/engine must be "sqlite" or "postgres".');
  const validate = stateValidators[engine];
  if (validate(state)) return;
  const first = validate.errors?.[0];
  const errors = first ? [{ ...first, instancePath: `/state${first.instancePath}` }] : null;
  throw configError(`The config is invalid: ${describe(errors)}${engine === 'postgres' ? ' (postgres takes urlRef only: {"env": …} or {"file": …})' : ''}.`);
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
