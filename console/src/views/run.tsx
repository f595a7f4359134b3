/**
 * One run's page (`#run/<id>`): who, where, when and how long; its outcome and why; its steps
 * with their timing and tokens, each tool call with its approval and how long it took; and,
 * while the run is active (on any replica), its live events. The page reloads when the live
 * feed says the run changed.
 */
import { useState } from 'preact/hooks';
import type { OperatorRun, OperatorRunDetail, OperatorStep, OperatorToolCall } from '../../../src/client/index.js';
import { ApprovalCard } from '../approval-card.js';
import { CopyId, ErrorLine, RunDuration, RunState, Scroll, stepsOf } from '../components.js';
import { duration, since, time, tokens } from '../format.js';
import { EventLog, useEventStream, watchRun } from '../events.js';
import { useLive } from '../live.js';
import { useLoad } from '../load.js';
import type { ViewProps } from './shell.js';

export function RunPage({ session, live, fail, runId }: ViewProps & { runId: string }) {
  const state = useLive(live);
  const detail = useLoad<OperatorRunDetail>(
    () => session.operator.run(runId).catch((failure: unknown) => (fail(failure), Promise.reject(failure))),
    [runId],
    state.runs.get(runId) ?? 0,
    500,
  );
  const run = detail.data?.run;
  // Once seen running, its events stay on the page after it ends.
  const [watched, setWatched] = useState(false);
  const [decision, setDecision] = useState<string>();
  if (run?.state === 'running' && !watched) setWatched(true);
  return (
    <section class="run-page" data-testid="run-page" data-run={runId}>
      <p>
        <a href="#runs">← Runs</a>
      </p>
      <h2>
        Run <CopyId id={runId} full />
      </h2>
      <ErrorLine error={detail.error} />
      {run && <Summary run={run} />}
      {decision && (
        <p class="result" data-testid="decision-result">
          {decision}
        </p>
      )}
      {run?.waiting?.kind === 'approval' && run.waiting.id && <Decide session={session} fail={fail} approvalId={run.waiting.id} onDecided={(text) => (setDecision(text), detail.reload())} />}
      {detail.data && <Steps steps={detail.data.steps} run={run!} />}
      {watched && <LiveEvents session={session} fail={fail} runId={runId} />}
    </section>
  );
}

/** The pending approval the run waits for, to decide right here. */
function Decide({ session, fail, approvalId, onDecided }: Pick<ViewProps, 'session' | 'fail'> & { approvalId: string; onDecided: (result: string) => void }) {
  const pending = useLoad(() => session.operator.approvals({ limit: 100 }), [approvalId]);
  const entry = pending.data?.approvals.find((candidate) => candidate.approval.approvalId === approvalId);
  return (
    <div data-testid="run-approval">
      <h3>Waiting for your decision</h3>
      <ErrorLine error={pending.error} />
      {entry && <ApprovalCard entry={entry} operator={session.operator} fail={fail} onDecided={onDecided} />}
    </div>
  );
}

function Summary({ run }: { run: OperatorRun }) {
  return (
    <dl class="summary" data-testid="run-summary">
      <dt>State</dt>
      <dd>
        <RunState run={run} />
      </dd>
      {run.reason && (
        <>
          <dt>Why</dt>
          <dd class="reason" data-testid="run-reason">
            {run.reason}
          </dd>
        </>
      )}
      <dt>Subject</dt>
      <dd>{run.subject}</dd>
      <dt>Provider / model</dt>
      <dd>
        {run.provider} / {run.model}
      </dd>
      <dt>Started</dt>
      <dd>{time(run.startedAt)}</dd>
      {run.finishedAt && (
        <>
          <dt>Finished</dt>
          <dd>{time(run.finishedAt)}</dd>
        </>
      )}
      <dt>Duration</dt>
      <dd data-testid="run-duration">
        <RunDuration run={run} />
      </dd>
      <dt>Steps</dt>
      <dd>{stepsOf(run)}</dd>
      <dt>Tokens in / out</dt>
      <dd>{tokens(run.usage)}</dd>
      {run.jobId && (
        <>
          <dt>Job</dt>
          <dd>
            <CopyId id={run.jobId} full />
          </dd>
        </>
      )}
    </dl>
  );
}

function Steps({ steps, run }: { steps: OperatorStep[] | undefined; run: OperatorRun }) {
  if (!steps) {
    return (
      <p class="muted" data-testid="no-steps">
        This host replica did not serve this run (or has since restarted): only its usage record is left, without its steps.
      </p>
    );
  }
  if (steps.length === 0) return <p class="muted">No step has started.</p>;
  return (
    <>
      <h3>Steps</h3>
      <Scroll>
        <table data-testid="steps">
          <thead>
            <tr>
              <th>Step</th>
              <th>Started</th>
              <th>Took</th>
              <th>Tokens in / out</th>
              <th>Tools</th>
            </tr>
          </thead>
          <tbody>
            {steps.map((step) => (
              <tr key={step.step} data-step={step.step}>
                <td>{step.step}</td>
                <td>{time(step.startedAt)}</td>
                <td>{step.durationMs !== undefined ? duration(step.durationMs) : run.state === 'running' ? `${duration(since(step.startedAt))} so far` : ''}</td>
                <td>{tokens(step.usage)}</td>
                <td>{step.tools.length === 0 ? <span class="muted">none</span> : step.tools.map((tool) => <Tool key={tool.callId} tool={tool} />)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>
    </>
  );
}

function Tool({ tool }: { tool: OperatorToolCall }) {
  const { approval } = tool;
  return (
    <div class="tool" data-tool={tool.name}>
      <span class="mono">{tool.name}</span> <span class="muted">{tool.durationMs !== undefined ? duration(tool.durationMs) : 'no result yet'}</span>
      {approval && (
        <span class="approval-note" data-testid="tool-approval">
          {' '}
          · approval {approval.outcome ?? 'pending'}
          {approval.resolvedAt ? ` after ${duration(since(approval.requestedAt, approval.resolvedAt))}` : ''}
        </span>
      )}
      {tool.executionRequestedAt && <span class="muted"> · run by the application</span>}
    </div>
  );
}

function LiveEvents({ session, fail, runId }: Pick<ViewProps, 'session' | 'fail'> & { runId: string }) {
  const { events, status } = useEventStream(watchRun(session.operator, runId), runId, fail);
  return (
    <div class="panel" data-testid="run-watch">
      <h3>
        Live events <span class="muted">({status})</span>
      </h3>
      <EventLog events={events} />
    </div>
  );
}
