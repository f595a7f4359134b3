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
import type { ExecuteOptions, RunJournal } from '../runtime/services.js';
import { authorizeRun, requireResources, type Principal } from './access.js';
import type { Admission } from './admission.js';
import type { HostServices } from './extension.js';
import type { Observers } from './observers.js';

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
      applicationToolApprovals: principal.grants.get('applicationToolApprovals') ?? new Set<string>(),
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
    try {
      let journal: RunJournal | undefined;
      let runId: string | undefined;
      if (key !== undefined && operations && fingerprint) {
        const claim = await operations.claim(principal.subject, key, run, fingerprint);
        if ('replay' in claim) {
          slot.release();
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
      const executed = driver.execute(prepared, slot.controller.signal, { runId, journal, continuation: turn?.continuation });
      const events = releasedAtEnd(turn ? turn.run(executed) : executed, slot.release);
      const observed = observers.run(events, { request: turn ? turn.request : run, vendor: prepared.adapter.info.vendor, subject: principal.subject });
      return {
        events: observed,
        done: () => {
          claimDone?.();
          slot.release();
        },
      };
    } catch (error) {
      claimDone?.();
      slot.release();
      throw error;
    }
  }

  /** A background run's request as it is submitted, checked: everything a run would refuse is refused before anything is queued. */
  checkBackground(body: unknown, caller: RunCaller): RunRequest {
    const request = this.parts.driver.parse(body);
    requireResources(request, caller);
    this.parts.driver.prepareParsed(request, { subject: caller.subject, applicationToolApprovals: caller.grants.get('applicationToolApprovals') ?? new Set<string>() });
    return request;
  }

  /**
   * A background run the job pool has claimed with its slot (`release`): checked again against
   * the token as configured now, then executed with the job's journal under its run id — from
   * its checkpoint when it waited for a person (`resume`), checkpointing again at the next wait
   * (`parking`, feature `interactive-jobs`).
   */
  background(
    request: RunRequest,
    caller: RunCaller,
    run: { runId: string; jobId: string; journal: RunJournal; signal: AbortSignal; release: () => void } & Pick<ExecuteOptions, 'parking' | 'resume'>,
  ): AsyncGenerator<RunEvent> {
    const { driver, observers } = this.parts;
    requireResources(request, caller);
    const prepared = driver.prepareParsed(request, {
      subject: caller.subject,
      tokenId: caller.tokenId,
      applicationToolApprovals: caller.grants.get('applicationToolApprovals') ?? new Set<string>(),
    });
    const executed = driver.execute(prepared, run.signal, { runId: run.runId, journal: run.journal, parking: run.parking, resume: run.resume });
    return observers.run(releasedAtEnd(executed, run.release), { request: prepared.request, vendor: prepared.adapter.info.vendor, subject: prepared.subject, jobId: run.jobId });
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

function withoutSession(run: RunRequest): RunRequest {
  const { session: _session, ...rest } = run;
  return rest;
}

async function* replayed(events: RunEvent[]): AsyncGenerator<RunEvent> {
  yield* events;
}

/** Frees the run's admission slot at its terminal event: the metering written after it must not hold the slot once the caller has the outcome. */
async function* releasedAtEnd(events: AsyncGenerator<RunEvent>, release: () => void): AsyncGenerator<RunEvent> {
  for await (const event of events) {
    if (TERMINAL_EVENT_TYPES.has(event.type)) release();
    yield event;
  }
}
