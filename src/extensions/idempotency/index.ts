/**
 * Idempotent runs (feature `idempotency`): a run with `idempotencyKey` is recorded, and a repeat
 * of the same request replays the record. Always on; config section `idempotency` (record size
 * and retention). Finished records are dropped once their retention ends.
 */
import { defineExtension } from '../../http/extension.js';
import { IdempotencyConfig } from './config.js';
import type { OperationLog } from './operation-log.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** Operation records for `idempotencyKey` (the run path claims and replays them). */
    operations: OperationLog;
  }
}

export const idempotencyExtension = defineExtension({
  id: 'idempotency',
  features: ['idempotency'],
  configSchema: IdempotencyConfig,
  defaultConfig: {},
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
