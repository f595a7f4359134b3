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
  status: 'completed' | 'failed' | 'cancelled';
  errorCode?: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  steps: number;
  /** Totals of the measurements every step reported. */
  usage: Usage;
}
