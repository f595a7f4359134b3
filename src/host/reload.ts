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
import { canonicalJson } from '../shared/json-identity.js';
import type { HostConfig } from './config.js';

/** What one part will switch to; nothing is visible until `commit`. */
export interface PreparedChange {
  /** Switches to the new state; synchronous and must not fail (all failing work belongs in `prepare`). */
  commit(): void;
  /** Releases what `prepare` built, when another part refused the reload. */
  discard?(): Promise<void> | void;
}

export interface ReloadPart {
  /** The config fields this part applies without a restart. */
  readonly fields: readonly (keyof HostConfig)[];
  /** Builds the new state, or throws (a DriverError says why) to refuse the whole reload. */
  prepare(next: HostConfig, current: HostConfig): Promise<PreparedChange> | PreparedChange;
}

export interface ReloadResult {
  /** The top-level config fields whose values changed (tokens are re-read even when their entries did not). */
  changed: string[];
}

/** Fields that name the file rather than configure the host. */
const IDENTITY: readonly (keyof HostConfig)[] = ['configDir', 'configPath'];

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
  get reloadable(): (keyof HostConfig)[] {
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
    const owned = new Set<keyof HostConfig>([...this.reloadable, ...IDENTITY]);
    const fixed = (Object.keys(current) as (keyof HostConfig)[]).filter((field) => !owned.has(field) && canonicalJson(current[field]) !== canonicalJson(next[field]));
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
