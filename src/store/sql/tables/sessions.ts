/**
 * Conversation sessions in the SQL store (a native-mode session also keeps its provider's opaque state). A turn is claimed with a guarded
 * update (the revision must match and the session be ready), so two replicas can never run
 * the same turn; the replica running a turn owns it, and a turn whose replica died is reaped
 * as `interrupted`. Retention counts idle time only: a running session has no expiry.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../../protocol/errors.js';
import type { HistoryMessage, SessionCreate, SessionInfo } from '../../../protocol/schemas.js';
import type { SessionRow, SessionStore } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import { CHECKPOINT_OWNER, ORPHAN, rowLock } from '../ownership.js';
import type { Migrations, Reaped } from '../table.js';


const SESSIONS = `CREATE TABLE sessions (
     id TEXT PRIMARY KEY, subject TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, mode TEXT NOT NULL,
     revision BIGINT NOT NULL, state TEXT NOT NULL, history TEXT NOT NULL, instructions TEXT, owner TEXT,
     created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, expires_at BIGINT, retention_ms BIGINT NOT NULL);
   CREATE INDEX sessions_expiry ON sessions (expires_at)`;
/** A native-mode session's opaque provider state (a CLI's conversation id); never part of a snapshot. */
const SESSION_PROVIDER_STATE = 'ALTER TABLE sessions ADD COLUMN provider_state TEXT';

interface SessionColumns {
  id: string;
  subject: string;
  provider: string;
  model: string;
  mode: 'history' | 'native';
  revision: number;
  state: SessionInfo['state'];
  history: string;
  instructions: string | null;
  owner: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  retention_ms: number;
  provider_state: string | null;
}

export class SessionTable implements SessionStore, Reaped {
  static readonly migrations: Migrations = {
    sqlite: [SESSIONS, SESSION_PROVIDER_STATE],
    postgres: [SESSIONS, SESSION_PROVIDER_STATE],
  };

  constructor(
    private readonly engine: SqlEngine,
    private readonly owner: () => string,
    private readonly now: () => number,
  ) {}

  async create(subject: string, create: SessionCreate, retentionMs: number, maxEntries: number): Promise<SessionRow> {
    return this.engine.transaction(async (tx) => {
      const now = this.now();
      await tx.run('DELETE FROM sessions WHERE expires_at IS NOT NULL AND expires_at <= ?', [now]);
      const [{ count } = { count: 0 }] = await tx.all<{ count: number }>('SELECT COUNT(*) AS count FROM sessions');
      if (Number(count) >= maxEntries) throw new DriverError('SESSION_CAPACITY', 'This host holds as many sessions as it may; one must end or expire first.', { retryable: true });
      const id = randomUUID();
      await tx.run(
        `INSERT INTO sessions (id, subject, provider, model, mode, revision, state, history, instructions, owner, created_at, updated_at, expires_at, retention_ms)
         VALUES (?, ?, ?, ?, ?, 0, 'ready', ?, ?, NULL, ?, ?, ?, ?)`,
        [id, subject, create.provider, create.model, create.mode, JSON.stringify(visible(create.history ?? [])), create.instructions ?? null, now, now, now + retentionMs, retentionMs],
      );
      const [created] = await tx.all<SessionColumns>('SELECT * FROM sessions WHERE id = ?', [id]);
      return row(created!);
    });
  }

  /** The session, unless it expired (an expired session is gone). */
  async read(id: string): Promise<SessionRow | undefined> {
    const [found] = await this.engine.all<SessionColumns>('SELECT * FROM sessions WHERE id = ? AND (expires_at IS NULL OR expires_at > ?)', [id, this.now()]);
    return found && row(found);
  }

  async list(subject: string, providers: readonly string[], limit: number): Promise<SessionRow[]> {
    if (providers.length === 0) return [];
    const rows = await this.engine.all<SessionColumns>(
      `SELECT * FROM sessions WHERE subject = ? AND provider IN (${providers.map(() => '?').join(', ')}) AND (expires_at IS NULL OR expires_at > ?)
       ORDER BY updated_at DESC, id LIMIT ?`,
      [subject, ...providers, this.now(), limit],
    );
    return rows.map(row);
  }

  /** Removes the session; returns the replica running its turn, if one is (a checkpointed turn's run finds the session gone when it goes on). */
  async delete(id: string): Promise<{ deleted: boolean; runningOn: string | undefined }> {
    const [removed] = await this.engine.all<{ state: string; owner: string | null }>('DELETE FROM sessions WHERE id = ? RETURNING state, owner', [id]);
    const runningOn = removed?.state === 'running' && removed.owner !== CHECKPOINT_OWNER ? (removed.owner ?? undefined) : undefined;
    return { deleted: removed !== undefined, runningOn };
  }

  /**
   * Claims the turn at `revision` for this replica, or says exactly why not (before any
   * model work): SESSION_NOT_FOUND, SESSION_PROVIDER_MISMATCH, SESSION_REVISION_CONFLICT,
   * SESSION_BUSY, SESSION_INTERRUPTED, SESSION_CONTEXT_LIMIT.
   */
  async begin(id: string, subject: string, revision: number, provider: string, model: string, maxMessages: number): Promise<SessionRow> {
    return this.engine.transaction(async (tx) => {
      const now = this.now();
      const [current] = await tx.all<SessionColumns>(`SELECT * FROM sessions WHERE id = ? AND (expires_at IS NULL OR expires_at > ?) ${rowLock(this.engine)}`, [id, now]);
      if (!current || current.subject !== subject) throw new DriverError('SESSION_NOT_FOUND', 'No such session.');
      if (current.provider !== provider || current.model !== model) throw new DriverError('SESSION_PROVIDER_MISMATCH', 'The session belongs to another provider or model.');
      if (Number(current.revision) !== revision) throw new DriverError('SESSION_REVISION_CONFLICT', `The session is at revision ${current.revision}, not ${revision}.`);
      if (current.state === 'running') throw new DriverError('SESSION_BUSY', 'A turn of this session is running.', { retryable: true });
      if (current.state === 'interrupted') throw new DriverError('SESSION_INTERRUPTED', 'A turn of this session was interrupted; its history is uncertain. Read it and start a new session.');
      if ((JSON.parse(current.history) as unknown[]).length + 2 > maxMessages) {
        throw new DriverError('SESSION_CONTEXT_LIMIT', `The session already holds ${maxMessages} messages or close to it; start a new one.`);
      }
      await tx.run("UPDATE sessions SET state = 'running', owner = ?, expires_at = NULL, updated_at = ? WHERE id = ?", [this.owner(), Math.max(now, Number(current.updated_at)), id]);
      return row({ ...current, state: 'running', owner: this.owner(), expires_at: null });
    });
  }

  /** Ends this replica's turn with the exchange appended: revision + 1, ready, idle clock restarted. */
  async commit(id: string, exchange: HistoryMessage[], providerState?: string): Promise<SessionRow | undefined> {
    return this.engine.transaction(async (tx) => {
      const [current] = await tx.all<SessionColumns>(`SELECT * FROM sessions WHERE id = ? AND owner = ? AND state = 'running' ${rowLock(this.engine)}`, [id, this.owner()]);
      if (!current) return undefined;
      const now = Math.max(this.now(), Number(current.updated_at));
      const history = [...(JSON.parse(current.history) as HistoryMessage[]), ...exchange];
      const [updated] = await tx.all<SessionColumns>(
        "UPDATE sessions SET state = 'ready', owner = NULL, revision = revision + 1, history = ?, provider_state = ?, updated_at = ?, expires_at = ? + retention_ms WHERE id = ? RETURNING *",
        [JSON.stringify(history), providerState ?? null, now, now, id],
      );
      return updated && row(updated);
    });
  }

  /** Ends this replica's turn without an exchange: `interrupted` once the model was asked, else ready again. */
  async release(id: string, modelWorkStarted: boolean): Promise<void> {
    const now = this.now();
    await this.engine.run(
      `UPDATE sessions SET state = ?, owner = NULL, updated_at = ?, expires_at = ? + retention_ms WHERE id = ? AND owner = ? AND state = 'running'`,
      [modelWorkStarted ? 'interrupted' : 'ready', now, now, id, this.owner()],
    );
  }

  /** Turns whose replica is gone become interrupted (their exchange is uncertain). */
  async reap(tx: SqlEngine): Promise<number> {
    const now = this.now();
    const result = await tx.run(`UPDATE sessions SET state = 'interrupted', owner = NULL, updated_at = ?, expires_at = ? + retention_ms WHERE state = 'running' AND (${ORPHAN})`, [now, now]);
    return result.changes;
  }
}

/** Only what a person saw: role and content. */
function visible(history: HistoryMessage[]): HistoryMessage[] {
  return history.map((message) => ({ role: message.role, content: message.content }));
}

function row(columns: SessionColumns): SessionRow {
  const info: SessionInfo = {
    id: columns.id,
    revision: Number(columns.revision),
    provider: columns.provider,
    model: columns.model,
    mode: columns.mode,
    state: columns.state,
    createdAt: new Date(Number(columns.created_at)).toISOString(),
    updatedAt: new Date(Number(columns.updated_at)).toISOString(),
  };
  if (columns.state !== 'running' && columns.expires_at !== null) info.expiresAt = new Date(Number(columns.expires_at)).toISOString();
  return {
    info,
    subject: columns.subject,
    history: JSON.parse(columns.history) as HistoryMessage[],
    ...(columns.instructions !== null ? { instructions: columns.instructions } : {}),
    ...(columns.provider_state !== null && columns.provider_state !== undefined ? { providerState: columns.provider_state } : {}),
  };
}
