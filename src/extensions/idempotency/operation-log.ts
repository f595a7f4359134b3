/**
 * Idempotent runs (feature `idempotency`): `idempotencyKey` is claimed per subject in the
 * store, the run's compact events are journaled at its commit points, and the same key with
 * the same request replays the record — never calling the provider, running a tool or
 * re-issuing an approval or tool-execution request.
 */
import { createHash, randomUUID } from 'node:crypto';
import { DriverError } from '../../protocol/errors.js';
import type { RunEvent, RunRequest } from '../../protocol/schemas.js';
import type { RunJournal } from '../../runtime/services.js';
import type { EventPayload } from '../../runtime/types.js';
import { isoTimestamp, type Clock } from '../../shared/clock.js';
import { canonicalJson } from '../../shared/json-identity.js';
import type { OperationRecord, StateStore } from '../../store/store.js';

export interface IdempotencyPolicy {
  /** Largest operation record, in bytes of event JSON (default 8,000,000). */
  maxRecordBytes?: number;
  /** How long finished records are kept after their last update (default 24 hours). */
  retentionMs?: number;
}

export const DEFAULT_IDEMPOTENCY = { maxRecordBytes: 8_000_000, retentionMs: 24 * 60 * 60 * 1000 };

/** Events that a replay must never send again: they would ask someone to act a second time. */
const NOT_REPLAYED: ReadonlySet<string> = new Set(['approval.requested', 'approval.resolved', 'tool.execution.requested']);

type OperationStore = Pick<StateStore, 'operations' | 'replica'>;

export class OperationLog {
  private readonly maxRecordBytes: number;
  readonly retentionMs: number;
  /** Keys this process is executing right now (`subject\0key`). */
  private readonly running = new Set<string>();

  constructor(
    private readonly store: OperationStore,
    private readonly clock: Clock,
    policy: IdempotencyPolicy = {},
  ) {
    this.maxRecordBytes = policy.maxRecordBytes ?? DEFAULT_IDEMPOTENCY.maxRecordBytes;
    this.retentionMs = policy.retentionMs ?? DEFAULT_IDEMPOTENCY.retentionMs;
  }

  /** SHA-256 of the validated request's canonical JSON: key order never matters, every value does. */
  fingerprint(request: RunRequest): string {
    return createHash('sha256').update(canonicalJson(request)).digest('hex');
  }

  /** The replay for a key already recorded, or undefined when the key is new. */
  async lookup(subject: string, key: string, fingerprint: string): Promise<RunEvent[] | undefined> {
    const record = await this.store.operations.find(subject, key);
    return record && this.replay(record, fingerprint);
  }

  /** Refuses a key already recorded for a different request (a background run's submission is checked before it is queued). */
  async checkConflict(subject: string, key: string, fingerprint: string): Promise<void> {
    const record = await this.store.operations.find(subject, key);
    if (record && record.fingerprint !== fingerprint) throw conflict();
  }

  /**
   * Claims the key for a run about to start and returns its record's run id and journal; when
   * someone else got the key first, returns their replay instead.
   */
  async claim(subject: string, key: string, request: RunRequest, fingerprint: string): Promise<{ runId: string; journal: RunJournal; done(): void } | { replay: RunEvent[] }> {
    const runId = randomUUID();
    const claim = await this.store.operations.claim({ subject, key, fingerprint, runId, provider: request.provider, model: request.model });
    if (!claim.claimed) return { replay: this.replay(claim.existing, fingerprint) };
    return { runId, ...this.executing(subject, key, runId) };
  }

  /**
   * A background run with a claimed key going on from its checkpoint here: its record came back
   * to this replica with the run. A background run's record has its own run id (run ids are
   * unique among records, and the job's row has the job's), which its journal writes under.
   */
  async resumed(subject: string, key: string): Promise<{ runId: string; journal: RunJournal; done(): void }> {
    const runId = (await this.store.operations.find(subject, key))?.runId;
    if (runId === undefined) throw new DriverError('OPERATION_STORE_ERROR', 'The idempotency record of this run is gone.', { outcome: 'uncertain' });
    return { runId, ...this.executing(subject, key, runId) };
  }

  /** The journal of a key this process executes (its record's rows written under `recordRunId`), marked as executing until `done`. */
  private executing(subject: string, key: string, recordRunId: string): { journal: RunJournal; done(): void } {
    const id = `${subject}\0${key}`;
    this.running.add(id);
    const journal: RunJournal = {
      record: async (_runId: string, event: EventPayload) => {
        const state = event.type === 'run.completed' ? 'completed' : event.type === 'run.failed' ? 'failed' : event.type === 'run.cancelled' ? 'cancelled' : undefined;
        try {
          await this.store.operations.append(subject, key, recordRunId, { at: isoTimestamp(this.clock), event }, { maxBytes: this.maxRecordBytes, ...(state ? { state } : {}) });
        } catch (error) {
          if (error instanceof DriverError) throw error;
          throw new DriverError('OPERATION_STORE_ERROR', 'The operation record could not be written.', { outcome: 'uncertain', cause: error });
        }
      },
    };
    return { journal, done: () => this.running.delete(id) };
  }

  /** Drops finished records older than the retention. */
  expire(): Promise<number> {
    return this.store.operations.expire(this.clock.now() - this.retentionMs);
  }

  private replay(record: OperationRecord, fingerprint: string): RunEvent[] {
    if (record.fingerprint !== fingerprint) throw conflict();
    const live = record.ownerAlive && (record.owner !== this.store.replica.id || this.running.has(`${record.subject}\0${record.key}`));
    if (record.state === 'running' && live) {
      throw new DriverError('OPERATION_IN_PROGRESS', 'A run with this idempotency key is still in progress.', { retryable: true });
    }
    const runId = record.runId ?? randomUUID();
    const kept = record.events.filter((entry) => !NOT_REPLAYED.has(entry.event.type));
    const at = kept[0]?.at ?? isoTimestamp(this.clock);
    if (kept[0]?.event.type !== 'run.started') kept.unshift({ at, event: { type: 'run.started', provider: record.provider, model: record.model } });
    const finished = record.state === 'completed' || record.state === 'failed' || record.state === 'cancelled';
    if (!finished) {
      // Cut off (its replica died, or its journal failed): what happened after the last record is unknown.
      const failure = new DriverError('OPERATION_UNCERTAIN', 'The run with this idempotency key was interrupted; what it did is uncertain, and it is not run again.', { outcome: 'uncertain' });
      kept.push({ at: isoTimestamp(this.clock), event: { type: 'run.failed', error: failure.toJSON() } });
    }
    return kept.map((entry, index) => ({ ...entry.event, runId, sequence: index + 1, timestamp: entry.at }) as RunEvent);
  }
}

const conflict = () => new DriverError('IDEMPOTENCY_CONFLICT', 'This idempotency key was used with a different request.');
