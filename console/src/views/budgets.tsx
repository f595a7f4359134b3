/**
 * Spend against budget: every configured scope (the host, each subject, each token, each
 * provider instance) with its rate limits and, per budget, a bar of what was used and what runs
 * in flight reserve against the limit, the figures and when the period resets
 * (`POST /v1/operator/limits`, the same figures as `agenticdriver usage`). Reloaded when the
 * live feed says runs started or finished.
 */
import type { BudgetStatus, ScopeLimits } from '../../../src/client/index.js';
import { ErrorLine, Scroll } from '../components.js';
import { time } from '../format.js';
import { useLive } from '../live.js';
import { useLoad } from '../load.js';
import type { ViewProps } from './shell.js';

export function Budgets({ session, live, fail }: ViewProps) {
  const state = useLive(live);
  const limits = useLoad(
    () =>
      session.operator.limits().then(
        (answer) => answer.limits,
        (failure: unknown) => {
          fail(failure);
          throw failure;
        },
      ),
    [],
    `${state.finished}:${state.active.size}`,
    2000,
  );
  if (limits.data?.length === 0) return null;
  return (
    <>
      <h2>Spend against budget</h2>
      <ErrorLine error={limits.error} />
      {limits.data && (
        <Scroll>
          <table data-testid="budgets">
            <thead>
              <tr>
                <th>Scope</th>
                <th>Rate limits</th>
                <th>Budget</th>
                <th>Spent</th>
                <th>Used / reserved / remaining</th>
                <th>Resets</th>
              </tr>
            </thead>
            <tbody>
              {limits.data.flatMap((scope) =>
                (scope.budgets.length > 0 ? scope.budgets : [undefined]).map((budget, index) => (
                  <tr key={`${scopeName(scope)} ${index}`} data-scope={scopeName(scope)} data-budget={budget ? `${budget.unit}:${budget.period}` : undefined}>
                    <td>{index === 0 ? scopeName(scope) : ''}</td>
                    <td>{index === 0 ? rates(scope) : ''}</td>
                    <td>{budget ? `${amount(budget, budget.limit)} per ${budget.period.replace(/^rolling-(\d+)$/, (_, ms: string) => `${Number(ms) / 60_000} min (rolling)`)}` : 'none'}</td>
                    <td>{budget && <SpendBar budget={budget} />}</td>
                    <td>{budget ? `${amount(budget, budget.used)} / ${amount(budget, budget.reserved)} / ${amount(budget, budget.remaining)}` : ''}</td>
                    <td>{budget ? time(budget.resetsAt) : ''}</td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        </Scroll>
      )}
      <p class="hint">
        <span class="swatch output" /> used <span class="swatch input" /> reserved by runs in flight. Subjects under <code>*</code> are listed once they have used the host.
      </p>
    </>
  );
}

function scopeName(scope: ScopeLimits): string {
  return scope.scope === 'host' ? 'host' : `${scope.scope} ${scope.name ?? ''}`;
}

function rates(scope: ScopeLimits): string {
  const parts = [
    scope.requestsPerMinute !== undefined ? `${scope.requestsPerMinute.toLocaleString()} requests/min` : undefined,
    scope.tokensPerMinute !== undefined ? `${scope.tokensPerMinute.toLocaleString()} tokens/min` : undefined,
    scope.concurrentRuns !== undefined ? `${scope.concurrentRuns} concurrent runs` : undefined,
  ];
  return parts.filter((part) => part !== undefined).join(', ') || '—';
}

function amount(budget: BudgetStatus, value: number): string {
  return budget.unit === 'usd' ? `$${value.toFixed(4)}` : `${value.toLocaleString()} tokens`;
}

/** Used, then reserved, as parts of the limit (drawn as SVG: the page's CSP allows no inline style). */
function SpendBar({ budget }: { budget: BudgetStatus }) {
  const part = (value: number) => (budget.limit > 0 ? Math.min(100, (value / budget.limit) * 100) : value > 0 ? 100 : 0);
  const used = part(budget.used);
  const reserved = Math.min(100 - used, part(budget.reserved));
  const percent = Math.round(part(budget.used + budget.reserved));
  return (
    <svg class="spend" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" aria-label={`${percent}% of the budget used or reserved`} data-used={used.toFixed(2)} data-reserved={reserved.toFixed(2)}>
      <rect x="0" y="0" width="100" height="10" class="track" />
      <rect x="0" y="0" width={used} height="10" class="output" />
      <rect x={used} y="0" width={reserved} height="10" class="input" />
    </svg>
  );
}
