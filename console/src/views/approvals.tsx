/**
 * Approvals: every subject's pending approvals, oldest first, each with Approve and Deny. The
 * list reloads when the live feed's pending count changes.
 */
import { useState } from 'preact/hooks';
import { ApprovalCard } from '../approval-card.js';
import { ErrorLine } from '../components.js';
import { useLive } from '../live.js';
import { useLoad } from '../load.js';
import type { ViewProps } from './shell.js';

export function Approvals({ session, live, fail }: ViewProps) {
  const state = useLive(live);
  const list = useLoad(
    () => session.operator.approvals({ limit: 100 }).catch((failure: unknown) => (fail(failure), Promise.reject(failure))),
    [],
    state.pendingApprovals,
  );
  const [result, setResult] = useState<string>();
  const approvals = list.data?.approvals ?? [];
  return (
    <section>
      <h2>
        Pending approvals <span class="muted">({state.pendingApprovals ?? approvals.length})</span>
      </h2>
      <ErrorLine error={list.error} />
      {result && (
        <p class="result" data-testid="decision-result">
          {result}
        </p>
      )}
      {list.data && approvals.length === 0 && (
        <p class="muted" data-testid="no-approvals">
          No approval is pending.
        </p>
      )}
      {approvals.map((entry) => (
        <ApprovalCard
          key={entry.approval.approvalId}
          entry={entry}
          operator={session.operator}
          fail={fail}
          onDecided={(text) => {
            setResult(text);
            list.reload();
          }}
        />
      ))}
    </section>
  );
}
