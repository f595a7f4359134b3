/**
 * Config reload without a restart (`agenticdriver serve` on SIGHUP, or `RunningHost.reload`),
 * all or nothing: each part of the running host that may change prepares its new state from
 * the new config first — reading secrets, building adapters, checking what only it can — and
 * only when every part has prepared do they all commit, synchronously, in one turn of the
 * event loop. A refused reload changes nothing and says why. Every config field no part owns
 * may change only with a restart, so a new config that changes one is refused as a whole.
 *
 * Adding a reloadable part is one `ReloadPart` (the fields it owns and its `prepare`).
 */
import { DriverError } from '../protocol/errors.js';
import type { ProviderAdapter } from '../providers/contract/v1.js';
import type { AgenticDriver } from '../runtime/driver.js';
import { canonicalJson } from '../shared/json-identity.js';
import { TokenAuthenticator } from '../http/access.js';
import type { Admission, AdmissionLimits } from '../http/admission.js';
import type { Extension } from '../http/extension.js';
import { DEFAULT_WRITE_STALL_MS, type EventStreams } from '../http/sse.js';
import { tokenGrants, type HostConfig, type HostLimits } from './config.js';
import { enabledExtensions } from './extensions.js';
import { DEFAULT_CONCURRENCY, type ReloadResult } from './options.js';
import { createProvider } from './runtime.js';

/** What one part will switch to; nothing is visible until `commit`. */
export interface PreparedChange {
  /** Switches to the new state; synchronous and must not fail (all failing work belongs in `prepare`). */
  commit(): void;
  /** Releases what `prepare` built, when another part refused the reload. */
  discard?(): Promise<void> | void;
}

export interface ReloadPart {
  /** The config fields this part applies without a restart. */
  readonly fields: readonly string[];
  /** Builds the new state, or throws (a DriverError says why) to refuse the whole reload. */
  prepare(next: HostConfig, current: HostConfig): Promise<PreparedChange> | PreparedChange;
}

export type { ReloadResult };

/** Fields that name the file rather than configure the host. */
const IDENTITY: readonly string[] = ['configDir', 'configPath'];

export class ConfigReloader {
  private config: HostConfig;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    config: HostConfig,
    private readonly parts: readonly ReloadPart[],
  ) {
    this.config = config;
  }

  /** The config the host runs with now. */
  get current(): HostConfig {
    return this.config;
  }

  /** The fields a reload may change (the rest need a restart). */
  get reloadable(): string[] {
    return this.parts.flatMap((part) => part.fields);
  }

  /** Applies `next`, one reload at a time; rejects (changing nothing) when it may not be applied. */
  reload(next: HostConfig): Promise<ReloadResult> {
    const attempt = this.queue.then(() => this.apply(next));
    this.queue = attempt.catch(() => undefined);
    return attempt;
  }

  private async apply(next: HostConfig): Promise<ReloadResult> {
    const current = this.config;
    const owned = new Set<string>([...this.reloadable, ...IDENTITY]);
    // Both configs' fields: an extension's section may be in only one of them.
    const fields = [...new Set([...Object.keys(current), ...Object.keys(next)])];
    const fixed = fields.filter((field) => !owned.has(field) && canonicalJson(current[field]) !== canonicalJson(next[field]));
    if (fixed.length > 0) {
      throw new DriverError(
        'UNSUPPORTED_CONFIGURATION',
        `The new config changes ${fixed.join(', ')}, which take effect only at a restart; nothing was reloaded. Without a restart a reload applies ${this.reloadable.join(', ')}.`,
      );
    }
    const prepared: PreparedChange[] = [];
    try {
      for (const part of this.parts) prepared.push(await part.prepare(next, current));
    } catch (error) {
      await Promise.allSettled(prepared.map((change) => change.discard?.()));
      throw error;
    }
    for (const change of prepared) change.commit();
    this.config = next;
    return { changed: this.reloadable.filter((field) => canonicalJson(current[field]) !== canonicalJson(next[field])) };
  }
}

/** The admission caps the limits give. */
export function admissionLimits(limits: HostLimits): AdmissionLimits {
  return { total: limits.maxConcurrentRuns ?? DEFAULT_CONCURRENCY.total, perSubject: limits.maxConcurrentRunsPerSubject ?? DEFAULT_CONCURRENCY.perSubject };
}

/** How long an event-stream write may stall: the code's override, else the limits'. */
export function writeStallOf(limits: HostLimits, override: number | undefined): number {
  return override ?? limits.writeStallTimeoutMs ?? DEFAULT_WRITE_STALL_MS;
}

/**
 * Tokens on reload: every token secret is read again (a rotated token file applies too). An
 * extension the tokens turn on (the operator endpoints, by the first token with the grant) is
 * mounted only at start, so such a reload is refused.
 */
export function tokensPart(authenticator: TokenAuthenticator, extensions: readonly Extension[], started: readonly string[], env: NodeJS.ProcessEnv): ReloadPart {
  return {
    fields: ['tokens'],
    prepare: async (next) => {
      const added = enabledExtensions(next, extensions).find(({ extension }) => !started.includes(extension.id));
      if (added) {
        const id = added.extension.id;
        throw new DriverError('UNSUPPORTED_CONFIGURATION', `The first token with the ${id} grant takes effect only at a restart (the ${id} endpoints are mounted at start); nothing was reloaded.`);
      }
      const loaded = await TokenAuthenticator.load(next.tokens, next.configDir, tokenGrants(extensions), env);
      return { commit: () => authenticator.adopt(loaded) };
    },
  };
}

/** Providers on reload: an unchanged entry keeps its adapter (its pools and warm processes); a changed one gets a new adapter. */
export function providersPart(driver: AgenticDriver, config: HostConfig, adapters: ProviderAdapter[], env: NodeJS.ProcessEnv): ReloadPart {
  let running = new Map(config.providers.map((entry, index) => [canonicalJson(entry), adapters[index]!]));
  return {
    fields: ['providers'],
    prepare: async (next) => {
      const created: ProviderAdapter[] = [];
      const discard = async () => {
        await Promise.allSettled(created.map((adapter) => adapter.close?.()));
      };
      const chosen: [string, ProviderAdapter][] = [];
      try {
        for (const entry of next.providers) {
          const key = canonicalJson(entry);
          let adapter = running.get(key);
          if (!adapter) created.push((adapter = createProvider(entry, next, env)));
          chosen.push([key, adapter]);
        }
      } catch (error) {
        await discard();
        throw error;
      }
      return {
        commit: () => {
          driver.replaceProviders(chosen.map(([, adapter]) => adapter));
          running = new Map(chosen);
        },
        discard,
      };
    },
  };
}

/**
 * Limits on reload: what the runtime, admission and event streams apply to calls admitted from
 * then on, and the budgets and rate limits (`governed`) to runs admitted and steps taken from then
 * on (their counters carry over). The new config was checked whole when it was read, so a bad
 * one never reaches here: the old limits stay.
 */
export function limitsPart(driver: AgenticDriver, admission: Admission, streams: EventStreams, writeStallOverride: number | undefined, governed: (limits: HostLimits) => void): ReloadPart {
  return {
    fields: ['limits'],
    prepare: (next, current) => {
      // Fastify sets its body limit when the server is built.
      if (next.limits.maxBodyBytes !== current.limits.maxBodyBytes) {
        throw new DriverError('UNSUPPORTED_CONFIGURATION', 'limits.maxBodyBytes takes effect only at a restart; nothing was reloaded.');
      }
      const { maxSteps, maxOutputTokens, idleTimeoutMs, maxAttempts } = next.limits;
      return {
        commit: () => {
          driver.setLimits({ maxSteps, maxOutputTokens, idleTimeoutMs, maxAttempts });
          admission.setLimits(admissionLimits(next.limits));
          streams.setWriteStall(writeStallOf(next.limits, writeStallOverride));
          governed(next.limits);
        },
      };
    },
  };
}
