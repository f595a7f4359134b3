/**
 * One pending approval, with its call's arguments shown as text (cut at 2,000 characters) and
 * Approve / Deny, which post an operator decision echoing the exact call. Used by the Approvals
 * view and by the page of a run that waits for it.
 */
import { useState } from 'preact/hooks';
import type { OperatorApproval, OperatorClient } from '../../src/client/index.js';
import { CopyId, useTicking } from './components.js';
import { bounded, describeFailure, duration, since, time } from './format.js';

const MAX_ARGUMENT_CHARS = 2000;

export function ApprovalCard({ entry, operator, onDecided, fail }: { entry: OperatorApproval; operator: OperatorClient; onDecided: (result: string) => void; fail: (failure: unknown) => void }) {
  const { approval } = entry;
  const [busy, setBusy] = useState(false);
  useTicking(true);
  const decide = async (decision: 'approve' | 'deny') => {
    setBusy(true);
    try {
      // The decision echoes the exact call shown, as every decision must.
      const resolution = await operator.decideApproval({ approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision });
      onDecided(`${approval.call.name} for run ${approval.runId}: ${resolution.outcome}.`);
    } catch (failure) {
      onDecided(describeFailure(failure));
      fail(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <article class="approval" data-approval={approval.approvalId}>
      <h3>
        <span class="mono">{approval.call.name}</span>{' '}
        <span class="muted">
          waiting {duration(since(approval.requestedAt))} (since {time(approval.requestedAt)})
        </span>
      </h3>
      <dl>
        <dt>Subject</dt>
        <dd>{entry.subject}</dd>
        <dt>Provider</dt>
        <dd>{entry.provider}</dd>
        <dt>Run</dt>
        <dd>
          <CopyId id={approval.runId} full href={`#run/${approval.runId}`} />
        </dd>
        {approval.expiresAt && (
          <>
            <dt>Expires</dt>
            <dd>{time(approval.expiresAt)}</dd>
          </>
        )}
      </dl>
      <pre class="arguments" data-testid="arguments">
        {bounded(approval.call.arguments, MAX_ARGUMENT_CHARS)}
      </pre>
      <div class="actions">
        <button class="approve" disabled={busy} onClick={() => decide('approve')}>
          Approve
        </button>
        <button class="deny" disabled={busy} onClick={() => decide('deny')}>
          Deny
        </button>
      </div>
    </article>
  );
}
