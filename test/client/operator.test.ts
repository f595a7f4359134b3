/** OperatorClient against a real host over loopback: every operator method, and its refusals. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AgenticClient, DriverError, OperatorClient, type RunEvent } from '../../src/client/index.js';
import { OTHER_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

const guarded = {
  name: 'guarded',
  description: 'An effect that needs a person to agree.',
  inputSchema: { type: 'object' },
  requiresApproval: true,
  execute: () => 'done',
};

describe('OperatorClient', () => {
  let host: TestHost;
  let operator: OperatorClient;
  let client: AgenticClient;
  before(async () => {
    host = await startTestHost(
      {
        approvals: { interactive: true },
        jobs: { retentionMs: 60_000, pollIntervalMs: 20 },
        tokens: [
          { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['guarded'], jobs: ['submit', 'read'] },
          { id: 'ops', subject: 'operator-1', tokenRef: { env: 'AD_TEST_OTHER' }, providers: [], operator: true },
        ],
      },
      { tools: [guarded] },
    );
    operator = new OperatorClient({ url: host.url, token: OTHER_TOKEN });
    client = new AgenticClient({ url: host.url, token: TOKEN });
  });
  after(async () => {
    await host?.close();
  });

  it('watches a run, decides its approval as operator, and reads it back in the lists and the audit log', async () => {
    const input = script([{ toolCall: { name: 'guarded', arguments: { text: '<b>hi</b>' } } }], [{ text: 'ok' }]);
    const stream = client.stream({ provider: 'mock', model: 'demo', input, tools: ['guarded'], approvals: { mode: 'interactive', idlePolicy: 'pause' } });
    let runId: string | undefined;
    for (let next = await stream.next(); !next.done; next = await stream.next()) {
      if (next.value.type === 'approval.requested') {
        runId = next.value.runId;
        break;
      }
    }
    assert.ok(runId);
    const runs = await operator.runs({ finished: 0 });
    assert.deepEqual(runs.finished, []);
    assert.equal(runs.active.find((run) => run.runId === runId)?.subject, 'test-user');
    const watched: RunEvent[] = [];
    const watching = (async () => {
      for await (const event of operator.watchRun(runId!)) watched.push(event);
    })();
    const { approvals } = await operator.approvals({ limit: 10 });
    assert.equal(approvals.length, 1);
    const { approval } = approvals[0]!;
    const resolution = await operator.decideApproval({ approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'deny' });
    assert.equal(resolution.outcome, 'denied');
    const rest: RunEvent[] = [];
    for await (const event of stream) rest.push(event);
    await watching;
    assert.equal(watched.at(-1)!.type, rest.at(-1)!.type);
    assert.ok(watched.some((event) => event.type === 'approval.resolved'));
    const audit = await operator.audit({ limit: 10 });
    assert.ok(audit.records.some((record) => record.kind === 'approval.resolved' && record.outcome === 'denied' && record.tokenId === 'ops'));
    assert.equal((await operator.approvals()).approvals.length, 0);
  });

  it('lists and tails any subject\'s job, and sums usage', async () => {
    const job = await client.submitJob({ key: 'operator-client-job', request: { provider: 'mock', model: 'demo', input: 'hello' } });
    const { jobs } = await operator.jobs({ limit: 5 });
    assert.ok(jobs.some((entry) => entry.job.id === job.id && entry.subject === 'test-user'));
    const events: RunEvent[] = [];
    for await (const event of operator.tailJob(job.id)) events.push(event);
    assert.equal(events.at(-1)!.type, 'run.completed');
    assert.equal(events[0]!.sequence, 1);
    const resumed: RunEvent[] = [];
    for await (const event of operator.tailJob(job.id, { after: 1 })) resumed.push(event);
    assert.equal(resumed[0]!.sequence, 2);
    const usage = await operator.usage({ by: 'provider' });
    assert.equal(usage.totals[0]!.key, 'mock');
  });

  it('throws FORBIDDEN for an application token and refuses bad requests before sending them', async () => {
    const application = new OperatorClient({ url: host.url, token: TOKEN });
    await assert.rejects(application.runs(), (error: DriverError) => error.code === 'FORBIDDEN');
    await assert.rejects(operator.runs({ finished: 1000 }), (error: DriverError) => error.code === 'INVALID_OPERATOR_REQUEST');
    assert.throws(() => operator.watchRun('not-a-uuid'), (error: DriverError) => error.code === 'INVALID_OPERATOR_REQUEST');
    await assert.rejects(
      (async () => {
        for await (const _event of operator.watchRun('00000000-0000-4000-8000-000000000000')) break;
      })(),
      (error: DriverError) => error.code === 'RUN_NOT_FOUND',
    );
  });
});
