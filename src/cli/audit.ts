/** `agenticdriver audit`: reads the approval audit log from the host's state store. */
import type { AuditRecord } from '../store/audit-record.js';
import { readHostConfig, resolveConfigPath } from '../host/config.js';
import { openStore } from '../store/open.js';

export async function readAudit(explicitPath: string | undefined, limit: number): Promise<AuditRecord[]> {
  const config = await readHostConfig(resolveConfigPath(explicitPath));
  const store = await openStore(config.state, config.configDir, process.env);
  try {
    return await store.audit.read(limit);
  } finally {
    await store.close();
  }
}
