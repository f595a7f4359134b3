/** The metering record handed to usage sinks after every run. No prompts, outputs or secrets. */
import type { Usage } from './types.js';

export interface UsageRecord {
  schema: 'agenticdriver.usage.v1';
  runId: string;
  subject: string;
  provider: string;
  vendor: string;
  model: string;
  authMode: 'api-key' | 'cli-session' | 'none';
  /** `interrupted`: the host stopped (crashed) while the run was in flight; found at the next start. */
  status: 'completed' | 'failed' | 'cancelled' | 'interrupted';
  errorCode?: string;
  /** `uncertain` on interrupted runs: what the provider or tools did is unknown. */
  outcome?: 'uncertain';
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  steps: number;
  /** Totals of the measurements every step reported. */
  usage: Usage;
}

/**
 * Written before a run asks its provider anything, so that a host that dies mid-run can
 * still account for it: a start without a usage record is an interrupted run.
 */
export type RunStartRecord = Pick<UsageRecord, 'schema' | 'runId' | 'subject' | 'provider' | 'vendor' | 'model' | 'authMode' | 'startedAt'>;
