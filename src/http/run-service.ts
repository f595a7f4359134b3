/**
 * The one run path. A run answered on its connection (`attached`: `POST /v1/runs`) and a
 * durable job's run (`background`: the job pool) go through the same steps here, in this order:
 * authorize and prepare, an admission slot under the same caps, the idempotency claim, the
 * session turn, execution with its journal, and the host's observers (usage, metrics, tracing,
 * the run monitor), the slot freed at the terminal event. The callers only carry the events:
 * the run route as JSON or SSE, the job pool into the job's log.
 */
import type { FastifyReply } from 'fastify';
import { DriverError } from '../protocol/errors.js';
import type { RunEvent, RunRequest } from '../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../protocol/terminal-events.js';
import type { AgenticDriver } from '../runtime/driver.js';
import type { ExecuteOptions, RunCheckpoint, RunJournal } from '../runtime/services.js';
import type { CheckpointHolds } from '../store/store.js';
import { authorizeRun, requireResources, type Principal } from './access.js';
import type { Admission } from './admission.js';
import type { GovernedRun, Governor } from './limits/governor.js';
import type { PreparedRun } from '../runtime/prepared-run.js';
import type { HostServices } from './extension.js';
import type { Observers, RunTap } from './observers.js';

declare module './extension.js' {
  interface ExtensionDeps<C> {
    /** The one run path (attached and background runs), built with the runtime the first time it is asked for. */
    runs(): RunService;
  }
}

export interface RunServiceParts {
  driver: AgenticDriver;
  /** Idempotent runs, sessions and evidence checks, when their extensions are on (filled in as they start). */
  services: Readonly<Partial<Pick<HostServices, 'operations' | 'sessions' | 'retrieval'>>>;
  admission: Admission;
  observers: Observers;
  /** Budgets and rate limits (config `limits`): admits a run before its first model step, settles each step, released at its end. */
  governor?: Governor | undefined;
  /** Told when releasing a run's holds failed (the reaper releases them once this replica's lease lapses). */
  onGovernanceError?: ((error: unknown) => void) | undefined;
}

/** An attached run once started: its events, and `done` to free what it holds once they have been carried. */
export interface AttachedRun {
  events: AsyncGenerator<RunEvent>;
  done(): void;
}

/** Who starts a background run: the submitting token as configured now. */
export type RunCaller = Pick<Principal, 'subject' | 'tokenId' | 'providers' | 'tools' | 'grants'>;

export class RunService {
  constructor(private readonly parts: RunServiceParts) {}

  /** The caps background runs share with attached ones (the job pool waits on them rather than being refused). */
  get admission(): Pick<Admission, 'tryAcquire' | 'waiting' | 'onFreed'> {
    return this.parts.admission;
  }

  /**
   * Starts a run answered on `reply`. Whatever refuses it (grants, preparation, 429 BUSY, a
   * conflicting key) throws before any event; a recorded key replays without a slot.
   */
  async attached(body: unknown, principal: Principal, options: { streaming: boolean; acceptOptionalEvents: boolean; reply: FastifyReply }): Promise<AttachedRun> {
    const { driver, services, admission, observers } = this.parts;
    const run = driver.parse(body);
    authorizeRun(run, principal, options.streaming);
    const operations = services.operations;
    const prepareOptions = {
      subject: principal.subject,
      tokenId: principal.tokenId,
      acceptOptionalEvents: options.acceptOptionalEvents,
      applicationToolApprovals: grantedApprovals(principal),
      idempotency: operations !== undefined,
    };
    // A session turn is checked without its session now; its history is filled in once the turn is claimed.
    const sessions = run.session ? services.sessions : undefined;
    let prepared = driver.prepareParsed(sessions ? withoutSession(run) : run, prepareOptions);
    const key = run.idempotencyKey;
    const fingerprint = key !== undefined && operations ? operations.fingerprint(run) : undefined;
    // A recorded key replays without an admission slot (docs/architecture.md, decisions: Idempotent replays).
    if (key !== undefined && operations && fingerprint) {
      const replay = await operations.lookup(principal.subject, key, fingerprint);
      if (replay) return this.replay(run, replay, principal.subject);
    }
    // Refused here (429), the key is not consumed: it is claimed only once the run is admitted.
    const slot = admission.admit(principal.subject, options.reply);
    let claimDone: (() => void) | undefined;
    let governed: GovernedRun | undefined;
    try {
      // Refused here (429 RATE_LIMITED / BUDGET_EXCEEDED), the key is not consumed either.
      governed = await this.govern(prepared);
      let journal: RunJournal | undefined;
      let runId: string | undefined;
      if (key !== undefined && operations && fingerprint) {
        const claim = await operations.claim(principal.subject, key, run, fingerprint);
        if ('replay' in claim) {
          slot.release();
          this.ungovern(governed);
          return await this.replay(run, claim.replay, principal.subject);
        }
        ({ runId, journal } = claim);
        claimDone = claim.done;
      }
      const turn = sessions ? await sessions.begin(run, principal, slot.controller) : undefined;
      if (turn) {
        try {
          prepared = driver.prepareParsed(turn.request, prepareOptions);
        } catch (error) {
          await turn.abandon();
          throw error;
        }
      }
      // The slot's controller is the run's own: one per run, aborted by a disconnect, a shutdown or the run's end.
      const executed = driver.execute(prepared, undefined, { runId, journal, continuation: turn?.continuation, steps: governed?.steps, controller: slot.controller });
      const observed = observers.run(turn ? turn.run(executed) : executed, { request: turn ? turn.request : run, vendor: prepared.adapter.info.vendor, subject: principal.subject }, releasedAtEnd(slot.release));
      const held = governed;
      return {
        events: observed,
        done: () => {
          claimDone?.();
          slot.release();
          this.ungovern(held);
        },
      };
    } catch (error) {
      claimDone?.();
      slot.release();
      this.ungovern(governed);
      throw error;
    }
  }

  /**
   * A background run's request as it is submitted, checked: everything a run would refuse before
   * it starts is refused before anything is queued — a session turn's request, a key already
   * recorded for another request. What depends on the moment it starts (the session's revision
   * and whether a turn runs, a key claimed meanwhile) is decided when it starts.
   */
  async checkBackground(body: unknown, caller: RunCaller): Promise<RunRequest> {
    const { driver, services } = this.parts;
    const request = driver.parse(body);
    requireResources(request, caller);
    const sessions = request.session ? services.sessions : undefined;
    sessions?.check(request, caller);
    driver.prepareParsed(sessions ? withoutSession(request) : request, { subject: caller.subject, applicationToolApprovals: grantedApprovals(caller), idempotency: services.operations !== undefined });
    if (request.idempotencyKey !== undefined && services.operations) {
      await services.operations.checkConflict(caller.subject, request.idempotencyKey, services.operations.fingerprint(request));
    }
    return request;
  }

  /**
   * A background run the job pool has claimed with its slot (`release`): checked again against
   * the token as configured now, then executed with the job's journal under its run id — from
   * its checkpoint when it waited for a person (`resume`), checkpointing again at the next wait
   * (`parking`, feature `interactive-jobs`). As an attached run, it claims its idempotency key
   * (a recorded key replays) and its session's turn when it starts; a run going on from its
   * checkpoint holds both already (they waited with it).
   */
  async background(
    request: RunRequest,
    caller: RunCaller,
    run: { runId: string; jobId: string; journal: RunJournal; controller: AbortController; release: () => void; parking?: BackgroundParking | undefined; resume?: ExecuteOptions['resume'] },
  ): Promise<AsyncGenerator<RunEvent>> {
    const { driver, services, observers } = this.parts;
    requireResources(request, caller);
    const prepareOptions = { subject: caller.subject, tokenId: caller.tokenId, applicationToolApprovals: grantedApprovals(caller), idempotency: services.operations !== undefined };
    const sessions = request.session ? services.sessions : undefined;
    let prepared = driver.prepareParsed(sessions ? withoutSession(request) : request, prepareOptions);
    const key = request.idempotencyKey;
    const operations = key !== undefined ? services.operations : undefined;
    // Refused here, the job fails with the refusal's code before any model call (it records why).
    const governed = await this.govern(prepared, run.resume !== undefined);
    let held: { runId: string; journal: RunJournal; done(): void } | undefined;
    try {
      if (key !== undefined && operations) {
        if (run.resume) held = await operations.resumed(caller.subject, key);
        else {
          const claim = await operations.claim(caller.subject, key, request, operations.fingerprint(request));
          if ('replay' in claim) {
            this.ungovern(governed);
            return releasedAtTerminal((await this.replay(request, claim.replay, caller.subject)).events, run.release);
          }
          held = claim;
        }
      }
    } catch (error) {
      this.ungovern(governed);
      throw error;
    }
    try {
      let turn: SessionTurn | undefined;
      if (sessions) {
        turn = run.resume ? sessions.resume(request, run.controller) : await sessions.begin(request, caller, run.controller);
        try {
          prepared = driver.prepareParsed(turn.request, prepareOptions);
        } catch (error) {
          await turn.abandon();
          throw error;
        }
      }
      const parking = run.parking;
      const executed = driver.execute(prepared, run.controller.signal, {
        runId: run.runId,
        journal: held ? journaledBoth(held.journal, run.journal) : run.journal,
        parking: parking && { park: (checkpoint) => parking.park(checkpoint, { session: turn?.sessionId, record: held?.runId }) },
        resume: run.resume,
        continuation: turn?.continuation,
        steps: governed?.steps,
      });
      const observed = observers.run(
        turn ? turn.run(executed) : executed,
        { request: turn ? turn.request : prepared.request, vendor: prepared.adapter.info.vendor, subject: prepared.subject, jobId: run.jobId },
        releasedAtEnd(run.release),
      );
      if (!held && !governed) return observed;
      return endingWith(observed, () => {
        held?.done();
        this.ungovern(governed);
      });
    } catch (error) {
      held?.done();
      this.ungovern(governed);
      throw error;
    }
  }

  /** The run admitted under the host's limits (or refused, 429), before its first model step. */
  private async govern(prepared: PreparedRun, resumed = false): Promise<GovernedRun | undefined> {
    const governor = this.parts.governor;
    if (!governor?.configured) return undefined;
    const { adapter, request, services } = prepared;
    return governor.admit({
      subject: prepared.subject,
      tokenId: prepared.tokenId,
      provider: adapter.info.id,
      request,
      vendor: adapter.info.vendor,
      model: request.model,
      authMode: adapter.info.authMode,
      maxOutputTokens: prepared.maxOutputTokens,
      resumed,
      priceUsd: (usage) => services.metering.priceUsd(adapter.info.vendor, request.model, usage),
    });
  }

  /** Releases what a governed run still holds (its concurrency slot, a reservation left by a failed step). */
  private ungovern(governed: GovernedRun | undefined): void {
    if (governed) void governed.end().catch((error: unknown) => this.parts.onGovernanceError?.(error));
  }

  /**
   * A recorded run's events, replayed. One that searched a corpus replays only when it
   * completed and its evidence is still visible at the same revisions (re-authorized, no new
   * search and no model call).
   */
  private async replay(run: RunRequest, events: RunEvent[], subject: string): Promise<AttachedRun> {
    if (run.retrieval) {
      const terminal = events.at(-1);
      const evidence = terminal?.type === 'run.completed' ? terminal.result.retrieval : undefined;
      const retrieval = this.parts.services.retrieval;
      if (!evidence || !retrieval) {
        throw new DriverError('CONTEXT_REPLAY_UNAVAILABLE', 'This run searched a corpus and did not complete, so its outcome cannot be replayed.', { outcome: 'uncertain' });
      }
      await retrieval.revalidate(evidence, { subject, signal: new AbortController().signal });
    }
    return { events: replayed(events), done: () => undefined };
  }
}

/** A claimed session turn (the sessions extension's). */
type SessionTurn = Awaited<ReturnType<HostServices['sessions']['begin']>>;

/** Where a background run hands its checkpoint, with what waits with it (its session's turn, its idempotency record). */
export interface BackgroundParking {
  park(checkpoint: RunCheckpoint, holds: CheckpointHolds): Promise<void>;
}

function grantedApprovals(caller: RunCaller): ReadonlySet<string> {
  return caller.grants.get('applicationToolApprovals') ?? new Set<string>();
}

/** A run whose key was claimed journals to its idempotency record first, then to the job's log. */
function journaledBoth(record: RunJournal, log: RunJournal): RunJournal {
  return {
    record: async (runId, event) => {
      await record.record(runId, event);
      await log.record(runId, event);
    },
  };
}

async function* endingWith(events: AsyncGenerator<RunEvent>, done: () => void): AsyncGenerator<RunEvent> {
  try {
    yield* events;
  } finally {
    done();
  }
}

function withoutSession(run: RunRequest): RunRequest {
  const { session: _session, ...rest } = run;
  return rest;
}

async function* replayed(events: RunEvent[]): AsyncGenerator<RunEvent> {
  yield* events;
}

/** Frees the run's admission slot at its terminal event: the metering written after it must not hold the slot once the caller has the outcome. */
function releasedAtEnd(release: () => void): RunTap {
  return { event: (event) => void (TERMINAL_EVENT_TYPES.has(event.type) && release()) };
}

/** `releasedAtEnd` for a replay, which no observer watches. */
async function* releasedAtTerminal(events: AsyncGenerator<RunEvent>, release: () => void): AsyncGenerator<RunEvent> {
  const tap = releasedAtEnd(release);
  for await (const event of events) {
    tap.event(event);
    yield event;
  }
}
