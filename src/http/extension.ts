/**
 * The extension contract. An extension is one folder under `src/extensions/` exporting one
 * `defineExtension({...})`, and one line in `EXTENSIONS` (`src/extensions/index.ts`). From that
 * list the host derives its config schema (each extension's section and the token fields it
 * grants), the features `/v1/protocol` lists and so the endpoints it serves, and the order in
 * which extensions start and (in reverse) shut down. Like Fastify's decorators, what an
 * extension offers the others (`HostServices`) and the code-level options it reads
 * (`ExtensionOptions`) are typed by declaration merging, next to the code that provides them.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Feature } from '../protocol/endpoints.js';
import type { AgenticDriver, DriverOptions } from '../runtime/driver.js';
import type { Clock } from '../shared/clock.js';
import type { StoreOptions } from '../store/open.js';
import type { StateStore } from '../store/store.js';
import type { GrantField, Principal, TokenEntry } from './access.js';
import type { HostLogger } from './logging.js';
import type { HostObserver, Observers } from './observers.js';
import type { Governor } from './limits/governor.js';
import type { EventStreams } from './sse.js';

/** What extensions offer each other and the host's run path, by name; each extension adds its entries. */
export interface HostServices {}

/** Options of `startHost` given in code (config never loads code); each extension adds those it reads. */
export interface ExtensionOptions {
  /** Structured logs: one line per request and per run (src/http/logging.ts). */
  log?: HostLogger;
}

/** The host config's core fields, as every extension may read them. */
export interface CoreConfig {
  readonly listen: { readonly host: string; readonly port: number; readonly tls?: unknown };
  readonly tokens: readonly TokenEntry[];
  readonly limits: { readonly idleTimeoutMs?: number | undefined };
  /** Absolute directory of the config file; relative paths resolve against it. */
  readonly configDir: string;
  /** Absolute directory of the host's local state. */
  readonly stateDirectory: string;
}

/** What the runtime reaches through extensions (interactive approvals, application tools, retrieval, usage records and metering). */
export type RunServiceOptions = Pick<DriverOptions, 'approvals' | 'toolExecutions' | 'retrieval' | 'onRunStarted' | 'onUsage' | 'metering'>;

/** The host's own local state (one live host per local state, src/host/local-state.ts). */
export interface LocalState {
  /** This process's folder: the state directory (SQLite) or its replica slot (PostgreSQL). */
  readonly directory: string;
  /** PostgreSQL: the slot's name, `replica-N`. */
  readonly slot: string | undefined;
  /** PostgreSQL: calls `adopt` for each other slot whose process died, holding that slot's lock meanwhile. */
  adoptOrphans(adopt: (directory: string, slot: string) => Promise<unknown>): Promise<number>;
}

export interface ExtensionDeps<C> {
  /** Its config section (its `defaultConfig` when the config has none; undefined for an extension without one). */
  readonly config: C;
  readonly host: CoreConfig;
  readonly options: ExtensionOptions;
  readonly env: NodeJS.ProcessEnv;
  readonly clock: Clock;
  readonly store: StateStore;
  /** The host's local state, which it owns while it runs. */
  readonly local: LocalState;
  /** What the extensions listed before this one offer. */
  readonly services: Readonly<Partial<HostServices>>;
  /**
   * The runtime. It is built the first time an extension asks for it, from the run services the
   * extensions before that one offered; so an extension that offers run services is listed
   * before every extension that uses the runtime.
   */
  driver(): AgenticDriver;
  /** The principal of a configured token, by id (undefined once it is no longer configured). */
  principalOf(tokenId: string): Principal | undefined;
  /** The observers of the host's runs and records (metrics, tracing, the run monitor). */
  readonly observers: Observers;
  /** Event streams with the host's heartbeat and write-stall bounds. */
  readonly streams: EventStreams;
  /** How many calls the host is serving now. */
  activeCalls(): number;
  /** Budgets and rate limits (config `limits`): their counters, for what reports them. */
  readonly governor: Governor;
  /** Where an internal error is reported (never sent to a client). */
  logInternalError(error: unknown, where: string): void;
}

/** An extension's additions to the host's CORS answers. */
export interface CorsAdditions {
  allowHeaders?: readonly string[];
  allowMethods?: readonly string[];
  exposeHeaders?: readonly string[];
}

/** An extension, once started. */
export interface ExtensionInstance {
  /** What it offers the extensions after it and the host (see `HostServices`). */
  services?: Partial<HostServices>;
  /** What it offers the runtime. */
  run?: RunServiceOptions;
  /** What it watches. */
  observe?: HostObserver;
  /** The features it offers, of those it declares (default: all of them). */
  features?: readonly Feature[];
  /** Its endpoints: a plugin registered in its own context, inside authentication and the table's guard. */
  routes?: FastifyPluginAsync;
  /** Endpoints with an access rule of their own (the console's page, `/metrics`), outside authentication. */
  publicRoutes?: FastifyPluginAsync;
  /** Whether an `Origin` is its own (the console page calling its host), which the CORS check then lets through. */
  ownsOrigin?(origin: string, hostHeader: string | undefined): boolean;
  /** What a browser on an allowed origin needs for its endpoints beyond the host's own (CORS): request headers and methods it may use, response headers it may read. */
  cors?: CorsAdditions;
  /**
   * Once the host listens and the store has reaped what dead replicas left, in list order; the
   * host answers 503 HOST_STARTING until every one has finished (the usage sinks reconcile, the
   * job workers start taking jobs).
   */
  start?(): void | Promise<void>;
  /** At shutdown, before the calls being served are ended (the job workers stop taking jobs). */
  stop?(): Promise<void>;
  /** After the server closed, in the reverse order of start (an `onClose` hook of its routes' context). */
  close?(): Promise<void>;
}

export interface Extension<C = unknown> {
  /** Its name, and the key of its config section. */
  readonly id: string;
  /** The `/v1/protocol` features it may offer; the table's endpoints of these exist only when it is on. */
  readonly features: readonly Feature[];
  /** The schema of its config section (optional in the host config). */
  readonly configSchema?: TSchema;
  /** What the schema cannot express; throws INVALID_CONFIG. */
  checkConfig?(config: C): void;
  /** The section as the host keeps it (default: as written; e.g. a console `enabled: false` is no console). */
  readConfig?(config: C): C | undefined;
  /** The section of an extension that is on even when the config has none. */
  readonly defaultConfig?: C;
  /** What it needs of the state store when the host opens it (e.g. the retrieval index's capacity). */
  storeOptions?(config: C, host: CoreConfig): StoreOptions;
  /** The token fields it adds, and the grants they give a principal. */
  readonly grants?: Readonly<Record<string, GrantField>>;
  /** Whether it is on (default: when its config section is there, or it has a `defaultConfig`). */
  enabled?(host: CoreConfig, config: C | undefined): boolean;
  /** Starts it; undefined when it turns out to offer nothing (a store without a retrieval index). */
  create(deps: ExtensionDeps<C>): ExtensionInstance | undefined | Promise<ExtensionInstance | undefined>;
}

/** An extension with a config section, typed by its schema (the provider kinds' pattern). */
export interface ConfiguredExtension<S extends TSchema> extends Extension<Static<S>> {
  readonly configSchema: S;
}

export function defineExtension<S extends TSchema>(extension: ConfiguredExtension<S>): Extension<Static<S>>;
/** An extension without a config section. */
export function defineExtension(extension: Extension<undefined> & { readonly configSchema?: undefined }): Extension<undefined>;
export function defineExtension(extension: Extension<never>): Extension<never> {
  return extension;
}
