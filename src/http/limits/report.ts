/**
 * Where every configured limit stands now: what `agenticdriver usage` prints after its totals
 * and what the operator endpoint `/v1/operator/limits` answers (the console's Usage view).
 */
import type { ScopeLimits } from '../../protocol/schemas.js';
import type { StateStore } from '../../store/store.js';
import type { Governor, LimitRule } from './governor.js';

/** Subjects under `*` listed at most (by name); any one of them can be asked for by `subject`. */
export const MAX_DEFAULT_SUBJECTS = 1000;

/**
 * Every configured scope's rate limits and budgets: the host, each subject named (and, under
 * `*`, each subject that has used the host, the first 1,000 by name), each token named, each
 * provider instance named. With `subject`, only that subject's rule (its own, else the `*`
 * default's, on its own counters). Empty when no limit is configured.
 */
export async function limitsReport(store: Pick<StateStore, 'usage'>, governor: Governor, subject?: string): Promise<ScopeLimits[]> {
  const limits = governor.limits;
  if (!governor.configured) return [];
  const scopes: [ScopeLimits['scope'], string | undefined, LimitRule][] = [];
  if (subject !== undefined) {
    const rule = limits.subjects?.[subject] ?? limits.subjects?.['*'];
    if (rule) scopes.push(['subject', subject, rule]);
  } else {
    if (limits.host) scopes.push(['host', undefined, limits.host]);
    const named = Object.keys(limits.subjects ?? {}).filter((name) => name !== '*');
    const defaulted = limits.subjects?.['*'] ? (await store.usage.totals({ by: 'subject' })).flatMap((row) => (row.key && !named.includes(row.key) ? [row.key] : [])) : [];
    const subjects = [...named, ...defaulted.sort().slice(0, MAX_DEFAULT_SUBJECTS)].sort();
    for (const name of subjects) scopes.push(['subject', name, limits.subjects?.[name] ?? limits.subjects!['*']!]);
    for (const [name, rule] of Object.entries(limits.tokens ?? {})) scopes.push(['token', name, rule]);
    for (const [name, rule] of Object.entries(limits.providers ?? {})) scopes.push(['provider', name, rule]);
  }
  const report: ScopeLimits[] = [];
  for (const [scope, name, rule] of scopes) {
    const entry: ScopeLimits = { scope, ...(name !== undefined ? { name } : {}), budgets: await governor.budgetStatus(scope, name) };
    if (rule.requestsPerMinute !== undefined) entry.requestsPerMinute = rule.requestsPerMinute;
    if (rule.tokensPerMinute !== undefined) entry.tokensPerMinute = rule.tokensPerMinute;
    if (rule.concurrentRuns !== undefined) entry.concurrentRuns = rule.concurrentRuns;
    report.push(entry);
  }
  return report;
}
