/** `agenticdriver audit`: reads the approval audit log from the host's state store. */
import type { AuditRecord } from '../store/audit-record.js';
import { readHostConfig, resolveConfigPath } from '../host/config.js';
import { openStore } from '../store/open.js';
import { printJson, printLines, table, wantsJson } from './output.js';

export async function readAudit(explicitPath: string | undefined, limit: number): Promise<AuditRecord[]> {
  const config = await readHostConfig(resolveConfigPath(explicitPath));
  const store = await openStore(config.state, config.configDir, process.env);
  try {
    return await store.readAudit(limit);
  } finally {
    await store.close();
  }
}

/** `agenticdriver audit`: a table at a terminal, else one JSON line per record. */
export async function auditCommand(options: { config?: string; limit?: number; json?: boolean }): Promise<void> {
  const records = await readAudit(options.config, options.limit ?? 100);
  if (wantsJson(options)) {
    for (const record of records) printJson(record);
    return;
  }
  if (records.length === 0) return printLines(['No approval has been requested yet.']);
  const what = (record: AuditRecord) => record.outcome ?? record.code ?? '';
  const who = (record: AuditRecord) => [record.operator ? `operator ${record.operator}` : undefined, record.tokenId ? `token ${record.tokenId}` : undefined].filter(Boolean).join(', ');
  printLines(
    table(
      ['at', 'event', 'subject', 'tool', 'outcome', 'decided by', 'run'],
      records.map((record) => [record.at, record.kind.replace('approval.', ''), record.subject, record.tool ?? '', what(record), who(record), record.runId ?? '']),
    ),
  );
}
