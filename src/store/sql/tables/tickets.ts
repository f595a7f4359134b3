/**
 * Application-tool tickets, owned by the replica whose run waits for the result. The one result
 * (or the application's progress) may arrive on any replica: it settles the row and signals the
 * owner. A ticket whose owner died is reaped as `interrupted`.
 */
import type { TicketResult, TicketRow, TicketStore } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import { CHECKPOINT_OWNER, LIVE_OWNER, ORPHAN } from '../ownership.js';
import type { Migrations, Reaped, TableContext } from '../table.js';
import type { ReplicaTable } from './replicas.js';
import { wake } from './run-checkpoints.js';

interface TicketColumns {
  execution_id: string;
  run_id: string;
  call_id: string;
  subject: string;
  provider: string;
  tool: string;
  output_schema: string | null;
  state: TicketRow['state'];
  owner_alive: number | boolean;
}

const TICKETS = `CREATE TABLE tool_tickets (
     execution_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, call_id TEXT NOT NULL, subject TEXT NOT NULL,
     provider TEXT NOT NULL, tool TEXT NOT NULL, output_schema TEXT, owner TEXT, state TEXT NOT NULL,
     result TEXT);
   CREATE INDEX tool_tickets_open ON tool_tickets (owner) WHERE state = 'pending'`;

export class TicketTable implements TicketStore, Reaped {
  static readonly migrations: Migrations = { sqlite: [TICKETS], postgres: [TICKETS] };

  constructor(
    private readonly context: TableContext,
    private readonly replica: ReplicaTable,
  ) {}

  async open(row: Omit<TicketRow, 'state' | 'ownerAlive'>): Promise<void> {
    await this.context.engine.run(
      `INSERT INTO tool_tickets (execution_id, run_id, call_id, subject, provider, tool, output_schema, owner, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
      [row.executionId, row.runId, row.callId, row.subject, row.provider, row.tool, row.outputSchema === undefined ? null : JSON.stringify(row.outputSchema), this.context.owner()],
    );
  }

  async read(executionId: string): Promise<TicketRow | undefined> {
    const [row] = await this.context.engine.all<TicketColumns>(`SELECT *, ${LIVE_OWNER} AS owner_alive FROM tool_tickets WHERE execution_id = ?`, [this.context.now(), executionId]);
    if (!row) return undefined;
    return {
      executionId: row.execution_id,
      runId: row.run_id,
      callId: row.call_id,
      subject: row.subject,
      provider: row.provider,
      tool: row.tool,
      outputSchema: row.output_schema === null ? undefined : (JSON.parse(row.output_schema) as unknown),
      state: row.state,
      ownerAlive: Boolean(row.owner_alive),
    };
  }

  async settle(executionId: string, result: TicketResult): Promise<boolean> {
    return this.context.engine.transaction(async (tx) => {
      const [row] = await tx.all<{ owner: string; run_id: string }>(
        `UPDATE tool_tickets SET state = 'accepted', result = ? WHERE execution_id = ? AND state = 'pending' AND ${LIVE_OWNER} RETURNING owner, run_id`,
        [JSON.stringify(result), executionId, this.context.now()],
      );
      if (!row) return false;
      // A checkpointed background run waits for it: queued again to go on, on any replica.
      if (row.owner === CHECKPOINT_OWNER) await wake(tx, row.run_id, this.context.now());
      else await this.replica.publish(tx, row.owner, { kind: 'ticket', id: executionId });
      return true;
    });
  }

  async result(executionId: string): Promise<TicketResult | undefined> {
    const [row] = await this.context.engine.all<{ result: string | null }>("SELECT result FROM tool_tickets WHERE execution_id = ? AND state = 'accepted'", [executionId]);
    return row?.result ? (JSON.parse(row.result) as TicketResult) : undefined;
  }

  async close(executionId: string): Promise<void> {
    await this.context.engine.run("UPDATE tool_tickets SET state = 'closed' WHERE execution_id = ? AND state = 'pending'", [executionId]);
  }

  async progress(executionId: string): Promise<void> {
    const [row] = await this.context.engine.all<{ owner: string | null }>("SELECT owner FROM tool_tickets WHERE execution_id = ? AND state = 'pending'", [executionId]);
    if (row?.owner) await this.replica.publish(this.context.engine, row.owner, { kind: 'progress', id: executionId });
  }

  async reap(tx: SqlEngine): Promise<number> {
    const tickets = await tx.run(`UPDATE tool_tickets SET state = 'interrupted' WHERE state = 'pending' AND (${ORPHAN})`);
    return tickets.changes;
  }
}
