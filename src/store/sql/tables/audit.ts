/** The approval audit log: append-only, read newest first. */
import type { AuditRecord } from '../../audit-record.js';
import type { AuditStore } from '../../store.js';
import type { SqlEngine } from '../engine.js';
import type { Migrations, TableContext } from '../table.js';

const COLUMNS = 'at TEXT NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL, approval_id TEXT, record TEXT NOT NULL';

export class AuditTable implements AuditStore {
  static readonly migrations: Migrations = {
    sqlite: [`CREATE TABLE approval_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, ${COLUMNS})`],
    postgres: [`CREATE TABLE approval_audit (id BIGSERIAL PRIMARY KEY, ${COLUMNS})`],
  };

  constructor(private readonly context: TableContext) {}

  async append(record: AuditRecord): Promise<void> {
    await this.insert(this.context.engine, record);
  }

  /** Appends inside another table's transaction (an approval opened or resolved with its record). */
  async insert(tx: SqlEngine, record: AuditRecord): Promise<void> {
    await tx.run('INSERT INTO approval_audit (at, kind, subject, approval_id, record) VALUES (?, ?, ?, ?, ?)', [
      record.at,
      record.kind,
      record.subject,
      record.approvalId ?? null,
      JSON.stringify(record),
    ]);
  }

  async read(limit: number): Promise<AuditRecord[]> {
    const rows = await this.context.engine.all<{ record: string }>('SELECT record FROM approval_audit ORDER BY id DESC LIMIT ?', [limit]);
    return rows.map((row) => JSON.parse(row.record) as AuditRecord);
  }

  async page(limit: number, before?: number): Promise<{ id: number; record: AuditRecord }[]> {
    const rows = await this.context.engine.all<{ id: number; record: string }>('SELECT id, record FROM approval_audit WHERE id < ? ORDER BY id DESC LIMIT ?', [
      before ?? Number.MAX_SAFE_INTEGER,
      limit,
    ]);
    return rows.map((row) => ({ id: Number(row.id), record: JSON.parse(row.record) as AuditRecord }));
  }
}
