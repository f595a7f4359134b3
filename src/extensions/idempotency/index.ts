/**
 * Idempotent runs (feature `idempotency`): a run with `idempotencyKey` is recorded, and a repeat
 * of the same request replays the record. Always on; config section `idempotency` (record size
 * and retention). Finished records are dropped once their retention ends.
 */
import { Type } from '@sinclair/typebox';
import { defineExtension } from '../../http/extension.js';
import { OperationLog } from './operation-log.js';
import { retentionTimer } from '../../store/retention.js';

declare module '../../http/extension.js' {
  interface HostServices {
    /** Operation records for `idempotencyKey` (the run path claims and replays them). */
    operations: OperationLog;
  }
}

export const IdempotencyConfig = Type.Object(
  {
    /** Largest operation record, in bytes of event JSON (default 8,000,000). */
    maxRecordBytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 1_000_000_000 })),
    /** How long finished operation records are kept (default 24 hours). */
    retentionMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 31_536_000_000 })),
  },
  { additionalProperties: false },
);

export const idempotencyExtension = defineExtension({
  id: 'idempotency',
  features: ['idempotency'],
  configSchema: IdempotencyConfig,
  defaultConfig: {},
  create({ config, store, clock, logInternalError }) {
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
  },
});
