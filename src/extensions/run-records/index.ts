/**
 * Run records (feature `run-records`): any run — attached (`POST /v1/runs`) or background (a job)
 * — read back by its run id, and its committed events paged and followed by cursor, from any
 * replica, by its owning subject. Always on; config section `runRecords` (the retention of
 * attached runs' records). None of these calls takes an admission slot.
 */
import { defineExtension } from '../../http/extension.js';
import { RunRecordsConfig } from './config.js';

export const runRecordsExtension = defineExtension({
  id: 'runRecords',
  features: ['run-records'],
  configSchema: RunRecordsConfig,
  defaultConfig: {},
  async create(deps) {
    return (await import('./instance.js')).create(deps);
  },
});
