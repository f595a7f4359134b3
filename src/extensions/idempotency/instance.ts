/** Idempotent runs, started: the operation log, and the expiry of finished records once the host listens. */
import type { ExtensionDeps, ExtensionInstance } from '../../http/extension.js';
import { retentionTimer } from '../../store/retention.js';
import type { IdempotencyConfig } from './config.js';
import { OperationLog } from './operation-log.js';

export function create({ config, store, clock, logInternalError }: ExtensionDeps<IdempotencyConfig>): ExtensionInstance {
  const operations = new OperationLog(store, clock, config);
  let expiry: { stop(): void } | undefined;
  return {
    services: { operations },
    // Records expire only once the host listens and has reaped what dead replicas left.
    start: () => {
      expiry = retentionTimer(operations.retentionMs, () => operations.expire(), (error) => logInternalError(error, 'operation record retention'));
    },
    close: async () => expiry?.stop(),
  };
}
