/**
 * Conversation sessions (feature `conversation-sessions`): the store keeps the visible
 * history; a run with `session: {id, revision}` replays it to the provider, and only at that
 * revision. The turn commits the exchange and moves the session to the next revision; a turn
 * that fails after the model was asked leaves the session `interrupted`. Sessions live in the
 * store, so they survive a restart and continue from any replica.
 *
 * Native mode, on providers that advertise `nativeContinuation` (CLI providers that resume
 * their own conversation): the turn also hands the provider a continuation, and the opaque
 * state it saves is committed with the exchange; the replayed history is still there for
 * whenever the provider cannot resume (another replica, state lost), so the turn stays correct.
 */
import { DriverError } from '../../protocol/errors.js';
import type { RunEvent, RunRequest, SessionCreate, SessionDeleteResult, SessionList, SessionListRequest, SessionSnapshot } from '../../protocol/schemas.js';
import type { ProviderContinuation } from '../../providers/contract/v1.js';
import type { AgenticDriver } from '../../runtime/driver.js';
import type { SessionRow, StateStore } from '../../store/store.js';
import { providerNotGranted } from '../../shared/grants.js';
import { requireGrant, type Principal } from '../../http/access.js';

export interface SessionsPolicy {
  /** Idle time after which a session is gone (never counted while a turn runs). */
  retentionMs: number;
  /** Sessions the host holds (default 1000). */
  maxEntries?: number;
  /** Visible messages one session may hold (default 100). */
  maxMessages?: number;
}

export const SESSION_DEFAULTS = { maxEntries: 1000, maxMessages: 100 };

/** Who asks (the endpoint's `sessions` grant is checked by the host before the call). */
type SessionCaller = Pick<Principal, 'subject' | 'providers' | 'grants'>;

/** A claimed turn: the request to run (history filled in), and the wrapper that commits it. */
export interface SessionTurn {
  /** The session's id as stored. */
  sessionId: string;
  request: RunRequest;
  /** Native mode: for the run's first model step (see ExecuteOptions). */
  continuation?: ProviderContinuation;
  run(events: AsyncGenerator<RunEvent>): AsyncGenerator<RunEvent>;
  /** Gives the turn back when the run never started (refused before execution). */
  abandon(): Promise<void>;
}

export class SessionService {
  /** Turns running on this replica, by session id. */
  private readonly turns = new Map<string, { controller: AbortController; provider: string }>();

  constructor(
    private readonly store: Pick<StateStore, 'sessions' | 'replica'>,
    private readonly driver: AgenticDriver,
    readonly policy: SessionsPolicy,
  ) {
    store.replica.onSignal((signal) => {
      if (signal.kind !== 'session') return;
      const turn = this.turns.get(signal.id);
      if (!turn) return;
      turn.controller.abort(deleted());
      // Deleted on another replica while its turn ran here: this replica's native state goes too (once the turn ends).
      void this.forget(turn.provider, signal.id);
    });
  }

  async create(body: SessionCreate, caller: SessionCaller): Promise<SessionSnapshot> {
    if (!caller.providers.has(body.provider)) throw providerNotGranted(body.provider);
    // The provider and model must be ones a run could use.
    const prepared = this.driver.prepareParsed(this.driver.parse({ provider: body.provider, model: body.model, input: 'session' }), { subject: caller.subject });
    if (body.mode === 'native' && prepared.adapter.info.capabilities.nativeContinuation !== true) {
      throw new DriverError('UNSUPPORTED_CONTINUATION', `Provider ${body.provider} continues sessions by replaying their history; create the session with mode "history".`);
    }
    const created = await this.store.sessions.create(caller.subject, body, this.policy.retentionMs, this.policy.maxEntries ?? SESSION_DEFAULTS.maxEntries);
    return snapshot(created);
  }

  async read(id: string, caller: SessionCaller): Promise<SessionSnapshot> {
    return snapshot(await this.load(id, caller));
  }

  /** The caller's subject's sessions on providers this token may use, most recently used first. */
  async list(request: SessionListRequest, caller: SessionCaller): Promise<SessionList> {
    const rows = await this.store.sessions.list(caller.subject, [...caller.providers], request.limit ?? DEFAULT_LIST_LIMIT);
    return { sessions: rows.map((row) => row.info) };
  }

  async delete(id: string, caller: SessionCaller): Promise<SessionDeleteResult> {
    const row = await this.load(id, caller);
    const { deleted: removed, runningOn } = await this.store.sessions.delete(id);
    if (!removed) throw notFound();
    if (runningOn === this.store.replica.id) this.turns.get(id)?.controller.abort(deleted());
    else if (runningOn) await this.store.replica.signal(runningOn, { kind: 'session', id });
    // This replica's copy of the provider's state; other replicas' are swept once idle past retention.
    if (row.info.mode === 'native') await this.forget(row.info.provider, row.info.id);
    return { id, deleted: true };
  }

  /** What a turn's request must be, checked before the session is read (a background turn is checked when it is submitted). */
  check(request: RunRequest, caller: SessionCaller): void {
    requireGrant(caller, { name: 'sessions', operation: 'continue' });
    if (request.history !== undefined || request.instructions !== undefined) {
      throw new DriverError('SESSION_HISTORY_CONFLICT', 'A session supplies the history and instructions; the request must not.');
    }
    if (request.attachments !== undefined || request.retrieval !== undefined) {
      throw new DriverError('SESSION_CONTEXT_UNSUPPORTED', 'A session turn cannot carry attachments or retrieval.');
    }
  }

  /**
   * Claims the turn the request names (before any model work; every conflict is refused
   * here) and returns the request with the session's history, plus the wrapper that commits
   * the exchange. `controller` is aborted with SESSION_DELETED if the session is deleted meanwhile.
   */
  async begin(request: RunRequest, caller: SessionCaller, controller: AbortController): Promise<SessionTurn> {
    const binding = request.session!;
    this.check(request, caller);
    const row = await this.store.sessions.begin(binding.id.toLowerCase(), caller.subject, binding.revision, request.provider, request.model, this.policy.maxMessages ?? SESSION_DEFAULTS.maxMessages);
    const { session: _session, ...rest } = request;
    const effective: RunRequest = { ...rest, ...(row.history.length > 0 ? { history: row.history } : {}), ...(row.instructions !== undefined ? { instructions: row.instructions } : {}) };
    let providerState: string | undefined;
    const continuation: ProviderContinuation | undefined =
      row.info.mode === 'native'
        ? {
            sessionId: row.info.id,
            ...(row.providerState !== undefined ? { state: row.providerState } : {}),
            historyLength: row.history.length,
            retentionMs: this.policy.retentionMs,
            save: (state) => {
              providerState = state;
            },
          }
        : undefined;
    return this.turn(row.info.id, request, effective, controller, { continuation, providerState: () => providerState, modelWorkStarted: false });
  }

  /**
   * The turn of a background run going on from its checkpoint, on whichever replica claimed it:
   * the turn came back to this replica with the run (the model was asked before it waited), and
   * the checkpoint holds the conversation, so the request needs no history. Its provider state,
   * if any, is not carried over the wait (the next turn replays the history).
   */
  resume(request: RunRequest, controller: AbortController): SessionTurn {
    const { session, ...rest } = request;
    return this.turn(session!.id.toLowerCase(), request, rest, controller, { providerState: () => undefined, modelWorkStarted: true });
  }

  /** The wrapper that ends the turn once: the exchange committed at `run.completed`, else given back (interrupted once the model was asked). */
  private turn(
    id: string,
    request: RunRequest,
    effective: RunRequest,
    controller: AbortController,
    options: { continuation?: ProviderContinuation | undefined; providerState: () => string | undefined; modelWorkStarted: boolean },
  ): SessionTurn {
    this.turns.set(id, { controller, provider: request.provider });
    const store = this.store.sessions;
    const turns = this.turns;
    let settled = false;
    // The turn ends once: committed, or given back (interrupted once the model was asked). A turn
    // whose run was checkpointed is no longer this replica's, and giving it back changes nothing.
    const end = async <T>(finish: () => Promise<T>): Promise<T | undefined> => {
      if (settled) return undefined;
      settled = true;
      turns.delete(id);
      return finish();
    };
    const settle = (modelWorkStarted: boolean) => end(() => store.release(id, modelWorkStarted));
    return {
      sessionId: id,
      request: effective,
      ...(options.continuation ? { continuation: options.continuation } : {}),
      abandon: () => settle(options.modelWorkStarted),
      async *run(events) {
        let modelWorkStarted = options.modelWorkStarted;
        try {
          for await (const event of events) {
            if (event.type === 'step.started') modelWorkStarted = true;
            // The session is settled before the caller learns how the turn ended.
            if (event.type === 'run.failed' || event.type === 'run.cancelled') await settle(modelWorkStarted);
            if (event.type !== 'run.completed') {
              yield event;
              continue;
            }
            const next = await end(() =>
              store.commit(
                id,
                [
                  { role: 'user', content: request.input },
                  { role: 'assistant', content: event.result.text },
                ],
                options.providerState(),
              ),
            );
            if (!next) {
              yield { ...event, type: 'run.cancelled', error: deleted().toJSON() } as unknown as RunEvent;
              return;
            }
            yield { ...event, result: { ...event.result, session: next.info } };
          }
        } finally {
          await settle(modelWorkStarted);
        }
      },
    };
  }

  /** Best effort: a folder left behind is swept once idle past retention. */
  private async forget(provider: string, id: string): Promise<void> {
    await this.driver.provider(provider)?.forgetSession?.(id).catch(() => undefined);
  }

  private async load(id: string, caller: SessionCaller): Promise<SessionRow> {
    const row = await this.store.sessions.read(id);
    if (!row || row.subject !== caller.subject) throw notFound();
    if (!caller.providers.has(row.info.provider)) throw providerNotGranted(row.info.provider);
    return row;
  }
}

function snapshot(row: SessionRow): SessionSnapshot {
  return { session: row.info, history: row.history, ...(row.instructions !== undefined ? { instructions: row.instructions } : {}) };
}

const DEFAULT_LIST_LIMIT = 20;
const notFound = () => new DriverError('SESSION_NOT_FOUND', 'No such session.');
const deleted = () => new DriverError('SESSION_DELETED', 'The session was deleted during this turn.');
