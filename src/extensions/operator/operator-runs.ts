/**
 * Finished runs as the operator endpoints show them: from a stored usage record (any
 * replica's) with the reason its code gives, and the page cursor of the finished list
 * (opaque to callers: the last listed run's finish time and id).
 */
import { DriverError } from '../../protocol/errors.js';
import type { OperatorRun, OperatorRunsRequest } from '../../protocol/schemas.js';
import type { UsageRecord } from '../../runtime/usage-record.js';
import type { FinishedRunKey } from '../../store/store.js';
import { runReason } from './run-reasons.js';

const TOKEN_FIELDS = ['inputTokens', 'outputTokens', 'cachedInputTokens', 'reasoningTokens'] as const;

/** `seen`: what else is known of the run (this replica's summary, or its record): its job. */
export function finishedRun(record: UsageRecord, seen?: Pick<OperatorRun, 'jobId'>): OperatorRun {
  const usage: OperatorRun['usage'] = {};
  for (const field of TOKEN_FIELDS) {
    const value = record.observedUsage?.[field];
    if (value !== undefined) usage[field] = value;
  }
  const reason = runReason(record.status, record.errorCode);
  return {
    runId: record.runId,
    subject: record.subject,
    provider: record.provider,
    model: record.model,
    state: record.status,
    startedAt: record.startedAt,
    finishedAt: record.finishedAt,
    durationMs: record.durationMs,
    steps: record.steps,
    usage,
    ...(record.errorCode ? { errorCode: record.errorCode } : {}),
    ...(reason ? { reason } : {}),
    ...(record.outcome ? { outcome: record.outcome } : {}),
    ...(seen?.jobId ? { jobId: seen.jobId } : {}),
  };
}

/** Whether an active run passes the list's filters (the store applies the same ones to finished runs). */
export function matchesFilters(run: OperatorRun, filters: Pick<OperatorRunsRequest, 'state' | 'subject' | 'provider' | 'search'>): boolean {
  if (filters.state !== undefined && run.state !== filters.state) return false;
  if (filters.subject !== undefined && run.subject !== filters.subject) return false;
  if (filters.provider !== undefined && run.provider !== filters.provider) return false;
  if (filters.search === undefined) return true;
  const text = filters.search.toLowerCase();
  return [run.runId, run.subject, run.provider, run.model].some((field) => field.toLowerCase().includes(text));
}

export function encodeCursor(key: FinishedRunKey): string {
  return Buffer.from(JSON.stringify([key.finishedAt, key.runId])).toString('base64url');
}

export function decodeCursor(cursor: string): FinishedRunKey {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || value.length !== 2 || !value.every((part) => typeof part === 'string' && part.length > 0 && part.length <= 256)) {
    throw new DriverError('INVALID_OPERATOR_REQUEST', 'before must be the nextBefore of a previous page.');
  }
  return { finishedAt: value[0] as string, runId: value[1] as string };
}
