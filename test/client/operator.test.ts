/** OperatorClient against a real host over loopback: every operator method, and its refusals; the update feed and a run's page against a host that lies. */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

  it('follows the update feed while a run waits and finishes, reads the run\'s page, and pages finished runs', async () => {
    const stop = new AbortController();
    const updates = operator.updates(stop.signal);
    const first = await updates.next();
    assert.equal(first.value?.type, 'snapshot');
    const input = script([{ usage: { inputTokens: 3, outputTokens: 1 } }, { toolCall: { name: 'guarded', arguments: {} } }], [{ text: 'ok' }]);
    const stream = client.stream({ provider: 'mock', model: 'demo', input, tools: ['guarded'], approvals: { mode: 'interactive', idlePolicy: 'pause' } });
    let approval: { approvalId: string; runId: string; call: { id: string; name: string; arguments: Record<string, unknown> } } | undefined;
    while (!approval) {
      const next = await stream.next();
      assert.ok(!next.done);
      if (next.value.type === 'approval.requested') approval = next.value.approval;
    }
    assert.ok(approval);
    for (let next = await updates.next(); ; next = await updates.next()) {
      assert.ok(!next.done);
      if (next.value.type === 'run' && next.value.run?.waiting?.kind === 'approval') break;
    }
    const waiting = await operator.run(approval.runId);
    assert.equal(waiting.run.waiting?.id, approval.approvalId);
    await operator.decideApproval({ approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
    for await (const _event of stream);
    for (let next = await updates.next(); ; next = await updates.next()) {
      assert.ok(!next.done);
      if (next.value.type === 'finished' && next.value.run?.runId === approval.runId) break;
    }
    stop.abort();
    await assert.rejects(updates.next(), (error: DriverError) => error.code === 'CANCELLED' || error.name === 'AbortError');
    const page = await operator.run(approval.runId);
    assert.equal(page.run.state, 'completed');
    assert.equal(page.steps?.[0]?.tools[0]?.approval?.outcome, 'approved');

    const firstPage = await operator.runs({ finished: 1 });
    assert.equal(firstPage.finished.length, 1);
    assert.ok(firstPage.nextBefore);
    const secondPage = await operator.runs({ finished: 1, before: firstPage.nextBefore });
    assert.notEqual(secondPage.finished[0]?.runId, firstPage.finished[0]!.runId);
    assert.equal((await operator.runs({ state: 'completed', search: approval.runId })).finished[0]?.runId, approval.runId);
    assert.equal((await operator.usage({ by: 'hour' })).totals[0]!.key!.length, 13);
  });

  it('throws FORBIDDEN for an application token and refuses bad requests before sending them', async () => {
    const application = new OperatorClient({ url: host.url, token: TOKEN });
    await assert.rejects(application.runs(), (error: DriverError) => error.code === 'FORBIDDEN');
    await assert.rejects(operator.runs({ finished: 1000 }), (error: DriverError) => error.code === 'INVALID_OPERATOR_REQUEST');
    assert.throws(() => operator.watchRun('not-a-uuid'), (error: DriverError) => error.code === 'INVALID_OPERATOR_REQUEST');
    await assert.rejects(operator.run('not-a-uuid'), (error: DriverError) => error.code === 'INVALID_OPERATOR_REQUEST');
    await assert.rejects(operator.run('00000000-0000-4000-8000-000000000000'), (error: DriverError) => error.code === 'RUN_NOT_FOUND');
    await assert.rejects(operator.runs({ search: '' }), (error: DriverError) => error.code === 'INVALID_OPERATOR_REQUEST');
    await assert.rejects(
      (async () => {
        for await (const _event of operator.watchRun('00000000-0000-4000-8000-000000000000')) break;
      })(),
      (error: DriverError) => error.code === 'RUN_NOT_FOUND',
    );
  });
});

/** A host that answers with whatever the test says: the client must refuse what is not the contract. */
describe('OperatorClient against a host that lies', () => {
  let server: Server;
  let url: string;
  let answer: { type: string; body: string } = { type: 'application/json', body: '{}' };
  before(async () => {
    server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': answer.type, 'agenticdriver-version': '1.0' });
      response.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const runId = '00000000-0000-4000-8000-000000000001';
  const run = { runId, subject: 's', provider: 'mock', model: 'demo', state: 'completed', startedAt: '2026-12-01T10:00:00.000Z', steps: 1, usage: {} };

  it('refuses a run page for another run, or one that breaks the schema', async () => {
    const operator = new OperatorClient({ url, token: OTHER_TOKEN });
    answer = { type: 'application/json', body: JSON.stringify({ run: { ...run, runId: '00000000-0000-4000-8000-000000000002' } }) };
    await assert.rejects(operator.run(runId), (error: DriverError) => error.code === 'INVALID_RESPONSE' && /for run/.test(error.message));
    answer = { type: 'application/json', body: JSON.stringify({ run: { ...run, steps: -1 } }) };
    await assert.rejects(operator.run(runId), (error: DriverError) => error.code === 'INVALID_RESPONSE');
    answer = { type: 'application/json', body: JSON.stringify({ run, steps: [{ step: 1, startedAt: '2026-12-01T10:00:00.000Z', usage: {}, tools: [] }] }) };
    assert.equal((await operator.run(runId)).steps?.length, 1);
  });

  it('refuses an update feed that is not an event stream, or an update that breaks the schema; passes an unknown kind of update on', async () => {
    const operator = new OperatorClient({ url, token: OTHER_TOKEN });
    const read = async () => {
      const seen: unknown[] = [];
      for await (const update of operator.updates()) seen.push(update);
      return seen;
    };
    answer = { type: 'application/json', body: '{}' };
    await assert.rejects(read(), (error: DriverError) => error.code === 'INVALID_RESPONSE');
    answer = { type: 'text/event-stream', body: 'data: {"type":"snapshot"}\n\n' };
    await assert.rejects(read(), (error: DriverError) => error.code === 'INVALID_RESPONSE' && /update is invalid/.test(error.message));
    answer = { type: 'text/event-stream', body: 'data: not json\n\n' };
    await assert.rejects(read(), (error: DriverError) => error.code === 'INVALID_RESPONSE');
    answer = { type: 'text/event-stream', body: 'event: later\ndata: {"type":"later","at":"2026-12-01T10:00:00.000Z"}\n\n' };
    assert.deepEqual(await read(), [{ type: 'later', at: '2026-12-01T10:00:00.000Z' }]);
  });
});
