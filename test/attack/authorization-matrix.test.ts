/**
 * The authorization matrix (issue 13, "keep attacking"): every endpoint of the endpoint
 * table × a missing token, malformed tokens, a token lacking the grant, and another
 * subject's resources, against a real host on loopback. Each cell has the typed status the
 * host defines, and no cell reaches the model: every run request names a provider served by
 * a loopback vendor server that counts each request it gets. A new endpoint fails the
 * coverage test until it has its row here.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ENDPOINTS, type Endpoint } from '../../src/protocol/endpoints.js';
import { OPERATOR_ENDPOINTS } from '../../src/extensions/metrics/prometheus.js';
import { guardedTool, sseEvents, startTestHost, type TestHost } from '../support/host.js';
import { startChatCompletionsServer, type VendorServer } from '../vendors/index.js';

const OWNER = 'owner-token-0123456789abcdefghijklmnopqr';
const NO_GRANT = 'nogrant-token-0123456789abcdefghijklmno';
const STRANGER = 'stranger-token-0123456789abcdefghijklmn';
const VENDOR_KEY = 'vendor-key-for-the-loopback-provider';
/** The operator's metrics secret: opens /metrics and nothing else; host tokens do not open /metrics. */
const METRICS = 'metrics-token-0123456789abcdefghijklmnop';
/** A token with the operator grant only. */
const OPERATOR = 'operator-token-0123456789abcdefghijklmn';

/** Authorization header values that must never authenticate (undefined: no header at all). */
const MALFORMED: [string, string | undefined][] = [
  ['missing', undefined],
  ['empty', ''],
  ['scheme only', 'Bearer'],
  ['scheme and space', 'Bearer '],
  ['basic scheme', `Basic ${Buffer.from(`owner:${OWNER}`).toString('base64')}`],
  ['token without scheme', OWNER],
  ['other scheme', `Token ${OWNER}`],
  ['garbage', 'Bearer !!!not-a-token!!!'],
  ['short', 'Bearer abc'],
  ['wrong token', `Bearer ${OWNER.slice(0, -1)}X`],
  ['prefix of a token', `Bearer ${OWNER.slice(0, 32)}`],
  ['token with a suffix', `Bearer ${OWNER}x`],
  ['two tokens', `Bearer ${OWNER} ${OWNER}`],
  ['comma list', `Bearer ${OWNER}, Bearer ${OWNER}`],
  ['too long', `Bearer ${'a'.repeat(5000)}`],
];

type Expected = { status: number; code?: string; check?: (body: any) => void };
const FORBIDDEN: Expected = { status: 403, code: 'FORBIDDEN' };
/** One row per endpoint: what a token lacking the grant and a stranger (another subject with every grant) get. */
interface Row {
  noGrant: Expected;
  /** Operator endpoints: what the operator token gets (every application token, however granted, gets FORBIDDEN). */
  operator?: Expected;
  /** Undefined: the endpoint holds no resource of a subject (the stranger is an ordinary caller). */
  stranger?: Expected;
}

const MATRIX: Record<string, Row> = {
  health: { noGrant: { status: 200 } },
  getProtocol: { noGrant: { status: 200 } },
  listProviders: { noGrant: { status: 200, check: (body) => assert.deepEqual(body.providers, []) } },
  run: { noGrant: { status: 403, code: 'FORBIDDEN' } },
  decideApproval: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'APPROVAL_NOT_FOUND' } },
  reportToolProgress: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'TOOL_EXECUTION_NOT_FOUND' } },
  completeTool: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'TOOL_EXECUTION_NOT_FOUND' } },
  createSession: { noGrant: { status: 403, code: 'FORBIDDEN' } },
  readSession: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'SESSION_NOT_FOUND' } },
  deleteSession: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'SESSION_NOT_FOUND' } },
  // Lists: a stranger (another subject, every grant) sees none of the owner's sessions and jobs.
  listSessions: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 200, check: (body) => assert.deepEqual(body.sessions, []) } },
  submitJob: { noGrant: { status: 403, code: 'FORBIDDEN' } },
  readJob: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'JOB_NOT_FOUND' } },
  cancelJob: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'JOB_NOT_FOUND' } },
  listJobs: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 200, check: (body) => assert.deepEqual(body.jobs, []) } },
  jobEvents: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'JOB_NOT_FOUND' } },
  streamJob: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'JOB_NOT_FOUND' } },
  // Run records: the owner's attached run that waits for its approval; the subject's token without its provider may not read it.
  readRun: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'RUN_NOT_FOUND' } },
  runEvents: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'RUN_NOT_FOUND' } },
  streamRun: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 404, code: 'RUN_NOT_FOUND' } },
  // Retrieval: the owner's notes live in the owner's namespace; a stranger searches and deletes its own (empty) one.
  searchRetrieval: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 200, check: (body) => assert.deepEqual(body.hits, []) } },
  indexSource: { noGrant: { status: 403, code: 'FORBIDDEN' } },
  deleteSource: { noGrant: { status: 403, code: 'FORBIDDEN' }, stranger: { status: 200, check: (body) => assert.equal(body.deleted, false) } },
  ingestDocument: { noGrant: { status: 403, code: 'FORBIDDEN' } },
  // Operator endpoints: every application token (the stranger, and the owner below) is FORBIDDEN.
  operatorListRuns: { noGrant: FORBIDDEN, operator: { status: 200 } },
  operatorWatchRun: { noGrant: FORBIDDEN, operator: { status: 404, code: 'RUN_NOT_FOUND' } },
  operatorListApprovals: { noGrant: FORBIDDEN, operator: { status: 200, check: (body) => assert.equal(body.approvals.length, 1) } },
  operatorDecideApproval: { noGrant: FORBIDDEN, operator: { status: 404, code: 'APPROVAL_NOT_FOUND' } },
  operatorListJobs: { noGrant: FORBIDDEN, operator: { status: 200, check: (body) => assert.equal(body.jobs.length, 1) } },
  operatorStreamJob: { noGrant: FORBIDDEN, operator: { status: 200, check: (first) => assert.equal(first.type, 'run.started') } },
  operatorUpdates: { noGrant: FORBIDDEN, operator: { status: 200, check: (first) => assert.equal(first.type, 'snapshot') } },
  operatorReadRun: { noGrant: FORBIDDEN, operator: { status: 200, check: (body) => assert.equal(body.run.waiting.kind, 'approval') } },
  operatorUsage: { noGrant: FORBIDDEN, operator: { status: 200 } },
  operatorLimits: { noGrant: FORBIDDEN, operator: { status: 200, check: (body) => assert.deepEqual(body.limits, []) } },
  operatorAudit: { noGrant: FORBIDDEN, operator: { status: 200 } },
};

const OWNED_NOTE = { corpus: 'notes', source: { id: 'owned-note', revision: '1' }, chunks: [{ id: 'owned-1', text: 'The owned note of the owner.' }] };

const lookup = { name: 'lookup', description: 'Looks something up.', inputSchema: { type: 'object' } };
const effects: unknown[] = [];
const guarded = guardedTool(effects, 'done');

describe('authorization matrix: every endpoint × every way in', () => {
  let host: TestHost;
  let vendor: VendorServer;
  const open: AsyncGenerator<Record<string, unknown>>[] = [];
  let approval: Record<string, unknown>;
  let execution: Record<string, unknown>;
  let job: Record<string, unknown>;
  let session: Record<string, unknown>;

  /** Starts a streamed run of the owner and returns its stream once `type` arrives. */
  async function pendingRun(body: unknown, type: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${host.url}/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) });
    assert.equal(response.status, 200);
    const events = sseEvents(response);
    open.push(events);
    // next() by hand: leaving a for-await loop would close the stream and cancel the run.
    for (let next = await events.next(); !next.done; next = await events.next()) {
      const event = next.value;
      if (event.type === type) return event;
      assert.ok(!String(event.type).startsWith('run.') || event.type === 'run.started' || event.type === 'run.progress', `the run ended: ${JSON.stringify(event)}`);
    }
    throw new Error(`the run ended before ${type}`);
  }

  before(async () => {
    vendor = await startChatCompletionsServer({
      apiKey: VENDOR_KEY,
      models: ['m'],
      script: [{ turn: { toolCalls: [{ id: 'call-a', name: 'guarded', arguments: { to: 'ada' } }] } }, { turn: { toolCalls: [{ id: 'call-b', name: 'lookup', arguments: { q: 'x' } }] } }],
    });
    const grants = {
      providers: ['vendor', 'mock'],
      tools: ['guarded'],
      approveTools: ['guarded'],
      applicationTools: [{ name: 'lookup', requiresApproval: false }],
      jobs: ['submit', 'read', 'cancel'],
      sessions: ['create', 'read', 'continue', 'delete'],
      retrieval: { search: ['notes'], index: ['notes'], delete: ['notes'] },
      mcp: true,
      agUi: true,
      a2a: true,
    };
    host = await startTestHost(
      {
        providers: [
          { kind: 'openai-compatible', id: 'vendor', models: ['m'], baseUrl: vendor.url, apiKeyRef: { env: 'AD_VENDOR_KEY' } },
          { kind: 'mock', id: 'mock', models: ['demo'] },
        ],
        approvals: { interactive: true },
        applicationTools: { enabled: true, requireApproval: false },
        jobs: { retentionMs: 60_000, interactive: true },
        sessions: { retentionMs: 60_000 },
        retrieval: { corpora: [{ id: 'notes', namespace: 'subject' }] },
        metrics: { enabled: true, tokenRef: { env: 'AD_METRICS' } },
        mcp: {},
        agUi: { provider: 'mock', model: 'demo' },
        a2a: { provider: 'mock', model: 'demo', pushNotifications: {} },
        tokens: [
          { id: 'owner', subject: 'owner', tokenRef: { env: 'AD_OWNER' }, ...grants },
          // Same subject as the owner, no grant of any kind.
          { id: 'nogrant', subject: 'owner', tokenRef: { env: 'AD_NO_GRANT' }, providers: [] },
          { id: 'stranger', subject: 'stranger', tokenRef: { env: 'AD_STRANGER' }, ...grants },
          { id: 'operator', subject: 'ops', tokenRef: { env: 'AD_OPERATOR' }, providers: [], operator: true },
        ],
      },
      { tools: [guarded], env: { ...process.env, AD_OWNER: OWNER, AD_NO_GRANT: NO_GRANT, AD_STRANGER: STRANGER, AD_VENDOR_KEY: VENDOR_KEY, AD_METRICS: METRICS, AD_OPERATOR: OPERATOR } },
    );
    // The owner's resources the others attack: one pending approval, one dispatched ticket,
    // each in a run on the vendor provider (one model call each so far).
    const approvalEvent = await pendingRun({ provider: 'vendor', model: 'm', input: 'act', tools: ['guarded'], approvals: { mode: 'interactive', idlePolicy: 'pause' } }, 'approval.requested');
    approval = approvalEvent.approval as Record<string, unknown>;
    const executionEvent = await pendingRun({ provider: 'vendor', model: 'm', input: 'look', tools: ['lookup'], applicationTools: [lookup] }, 'tool.execution.requested');
    execution = executionEvent.execution as Record<string, unknown>;
    // The owner's job (on the mock provider, so the vendor's count stays the same).
    const submitted = await fetch(`${host.url}/v1/jobs/submit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'owner-job', request: { provider: 'mock', model: 'demo', input: 'owned' } }),
    });
    assert.equal(submitted.status, 200);
    job = (await submitted.json()) as Record<string, unknown>;
    const created = await fetch(`${host.url}/v1/sessions/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'mock', model: 'demo', mode: 'history' }),
    });
    assert.equal(created.status, 200);
    session = ((await created.json()) as { session: Record<string, unknown> }).session;
    const indexed = await fetch(`${host.url}/v1/retrieval/index`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' },
      body: JSON.stringify(OWNED_NOTE),
    });
    assert.equal(indexed.status, 200);
    assert.equal(vendor.requests.length, 2);
  });

  after(async () => {
    for (const events of open) await events.return(undefined);
    await host.close();
    await vendor.close();
    rmSync(host.dir, { recursive: true, force: true });
  });

  const pathOf = (endpoint: Endpoint) => {
    if (endpoint.operationId === 'listProviders') return `${endpoint.path}?refresh=true`;
    // The owner's run that waits for its approval.
    if (endpoint.operationId === 'operatorReadRun' || endpoint.operationId === 'streamRun') return endpoint.path.replace('{id}', String(approval.runId));
    return endpoint.path.replace('{id}', String(job.id));
  };
  /** A body that the owner could send successfully, so only the caller decides the answer. */
  function bodyOf(endpoint: Endpoint, authorization?: string): unknown {
    const ticket = () => ({ executionId: execution.executionId, runId: execution.runId, callId: (execution.call as { id: string }).id });
    switch (endpoint.operationId) {
      case 'run':
        return { provider: 'vendor', model: 'm', input: 'hello', tools: ['guarded'] };
      case 'decideApproval':
        return { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' };
      case 'reportToolProgress':
        return ticket();
      case 'completeTool':
        return { ...ticket(), output: { answer: 1 } };
      case 'createSession':
        return { provider: 'mock', model: 'demo', mode: 'history' };
      case 'readSession':
      case 'deleteSession':
        return { id: session.id };
      case 'submitJob':
        return { key: 'attack-job', request: { provider: 'mock', model: 'demo', input: 'hi' } };
      case 'readJob':
      case 'cancelJob':
        return { id: job.id };
      case 'jobEvents':
        return { id: job.id, after: 0 };
      case 'readRun':
        return { runId: approval.runId };
      case 'runEvents':
        return { runId: approval.runId, after: 0 };
      case 'searchRetrieval':
        return { corpus: 'notes', query: 'owned note' };
      case 'indexSource':
        return { corpus: 'notes', source: { id: 'attack-note', revision: '1' }, chunks: [{ id: 'attack-1', text: 'An attacker note.' }] };
      case 'deleteSource':
        return { corpus: 'notes', sourceId: OWNED_NOTE.source.id, revision: OWNED_NOTE.source.revision };
      case 'ingestDocument':
        return { corpus: 'notes', document: { type: 'text', source: { id: 'attack-doc', revision: '1' }, mediaType: 'text/plain', text: 'An attacker document.' } };
      case 'listSessions':
      case 'listJobs':
      case 'operatorListRuns':
      case 'operatorListApprovals':
      case 'operatorListJobs':
      case 'operatorUsage':
      case 'operatorLimits':
      case 'operatorAudit':
        return {};
      case 'operatorDecideApproval':
        // The owner's real approval for application tokens; one that does not exist for the operator (the owner decides it last).
        return { approvalId: authorization === `Bearer ${OPERATOR}` ? 'no-such-approval' : approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' };
      default:
        assert.equal(endpoint.request, undefined, `${endpoint.operationId} takes a body: give it one here`);
        return undefined;
    }
  }
  async function call(endpoint: Endpoint, authorization: string | undefined) {
    const body = bodyOf(endpoint, authorization);
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    if (authorization !== undefined) headers.authorization = authorization;
    const response = await fetch(`${host.url}${pathOf(endpoint)}`, { method: endpoint.method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
      // A stream (the update feed never ends by itself): its first event is the answer.
      const events = sseEvents(response);
      const first = await events.next();
      await events.return(undefined);
      return { status: response.status, headers: response.headers, body: first.value as any };
    }
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === '' ? undefined : (JSON.parse(text) as any) };
  }
  function assertAnswer(answer: Awaited<ReturnType<typeof call>>, expected: Expected, what: string) {
    assert.equal(answer.status, expected.status, `${what}: ${JSON.stringify(answer.body)}`);
    assert.equal(answer.headers.get('agenticdriver-version'), '1.0', what);
    if (expected.status >= 400) {
      assert.equal(answer.body.error.code, expected.code, what);
      assert.equal(typeof answer.body.error.message, 'string', what);
      assert.equal(answer.body.error.retryable, false, what);
    }
    expected.check?.(answer.body);
  }

  it('has a row for every endpoint in the endpoint table, and no row for an endpoint that is gone', () => {
    assert.deepEqual(Object.keys(MATRIX).sort(), ENDPOINTS.map((endpoint) => endpoint.operationId).sort());
  });

  for (const endpoint of ENDPOINTS) {
    const row = MATRIX[endpoint.operationId];
    describe(`${endpoint.method} ${endpoint.path}`, () => {
      it(endpoint.public ? 'answers every malformed or missing token as the public endpoint it is' : 'answers 401 UNAUTHORIZED to a missing, malformed or wrong token', async () => {
        for (const [name, authorization] of MALFORMED) {
          const answer = await call(endpoint, authorization);
          if (endpoint.public) assertAnswer(answer, { status: 200 }, name);
          else assertAnswer(answer, { status: 401, code: 'UNAUTHORIZED' }, name);
        }
        assert.equal(vendor.requests.length, 2, 'a refused request reached the provider');
      });

      it('answers a token lacking the grant as the host defines', async () => {
        assertAnswer(await call(endpoint, `Bearer ${NO_GRANT}`), row!.noGrant, 'no grant');
        assert.equal(vendor.requests.length, 2, 'a refused request reached the provider');
      });

      if (row?.operator) {
        it('refuses every application token, however granted, and answers the operator token', async () => {
          assertAnswer(await call(endpoint, `Bearer ${STRANGER}`), FORBIDDEN, 'stranger');
          assertAnswer(await call(endpoint, `Bearer ${OWNER}`), FORBIDDEN, 'owner');
          assertAnswer(await call(endpoint, `Bearer ${OPERATOR}`), row.operator!, 'operator');
          assert.equal(vendor.requests.length, 2, 'an operator request reached the provider');
        });
      }

      if (row?.stranger) {
        it("hides another subject's resources (404) from a token with every grant", async () => {
          assertAnswer(await call(endpoint, `Bearer ${STRANGER}`), row.stranger!, 'stranger');
          assert.equal(vendor.requests.length, 2, 'a refused request reached the provider');
        });
      }
    });
  }

  // Operator endpoints (outside the wire table): only their own secret opens them, and it opens nothing else.
  for (const operator of OPERATOR_ENDPOINTS) {
    describe(`${operator.method} ${operator.path} (operator)`, () => {
      const scrape = (authorization: string | undefined) =>
        fetch(`${host.url}${operator.path}`, { method: operator.method, headers: authorization === undefined ? {} : { authorization } });
      it('answers 401 UNAUTHORIZED to a missing or malformed token and to every host token', async () => {
        const attempts: [string, string | undefined][] = [...MALFORMED, ['owner', `Bearer ${OWNER}`], ['no grant', `Bearer ${NO_GRANT}`], ['stranger', `Bearer ${STRANGER}`], ['metrics token with a suffix', `Bearer ${METRICS}x`]];
        for (const [name, authorization] of attempts) {
          const response = await scrape(authorization);
          assert.equal(response.status, 401, name);
          assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED', name);
        }
        assert.equal(vendor.requests.length, 2);
      });
      it('answers 200 to its own token, which opens no protocol endpoint', async () => {
        assert.equal((await scrape(`Bearer ${METRICS}`)).status, 200);
        // Authentication comes before routing and body rules, so no body is needed to see the refusal.
        for (const endpoint of ENDPOINTS.filter((entry) => !entry.public)) {
          const response = await fetch(`${host.url}${endpoint.path}`, { method: endpoint.method, headers: { authorization: `Bearer ${METRICS}` } });
          const text = await response.text();
          assertAnswer({ status: response.status, headers: response.headers, body: JSON.parse(text) }, { status: 401, code: 'UNAUTHORIZED' }, `metrics token on ${endpoint.operationId}`);
        }
        assert.equal(vendor.requests.length, 2);
      });
    });
  }

  // The agent-protocol endpoints (outside the wire table, docs/agent-protocols.md): the same
  // tokens, their own grant, and the owner's resources out of a stranger's reach.
  describe('POST /mcp (MCP server)', () => {
    const mcp = (authorization: string | undefined, message: unknown) =>
      fetch(`${host.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify(message),
      });
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'matrix', version: '1' } } };
    const refusal = async (response: Response) => ({ status: response.status, headers: response.headers, body: JSON.parse(await response.text()) });

    it('answers 401 UNAUTHORIZED to a missing, malformed or wrong token, the metrics token included', async () => {
      for (const [name, authorization] of [...MALFORMED, ['metrics token', `Bearer ${METRICS}`] as [string, string]]) {
        assertAnswer(await refusal(await mcp(authorization, initialize)), { status: 401, code: 'UNAUTHORIZED' }, name);
      }
    });

    it('answers 403 FORBIDDEN to a token without the mcp grant, and the owner', async () => {
      assertAnswer(await refusal(await mcp(`Bearer ${NO_GRANT}`, initialize)), FORBIDDEN, 'no grant');
      const owner = await mcp(`Bearer ${OWNER}`, initialize);
      assert.equal(owner.status, 200);
      assert.match(await owner.text(), /"serverInfo"/);
    });

    it("keeps the owner's approval and job from a stranger with every grant", async () => {
      // An elicitation answer naming the owner's pending approval: decided as the stranger, so refused.
      const answer = await mcp(`Bearer ${STRANGER}`, { jsonrpc: '2.0', id: `agenticdriver-approval:${String(approval.approvalId)}`, result: { action: 'accept', content: {} } });
      assertAnswer(await refusal(answer), { status: 404, code: 'APPROVAL_NOT_FOUND' }, 'stranger answering the owner\'s elicitation');
      for (const name of ['read_job', 'follow_job', 'cancel_job']) {
        const called = await mcp(`Bearer ${STRANGER}`, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: { id: job.id } } });
        assert.equal(called.status, 200);
        const text = await called.text();
        assert.match(text, /"isError":true/, name);
        assert.match(text, /JOB_NOT_FOUND/, name);
      }
      // A token without the mcp grant never reaches the run tool, nor the model.
      const run = await mcp(`Bearer ${NO_GRANT}`, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'run', arguments: { provider: 'vendor', model: 'm', input: 'hi' } } });
      assert.equal(run.status, 403);
      assert.equal(vendor.requests.length, 2, 'a refused request reached the provider');
    });
  });

  describe('POST /ag-ui (AG-UI runs)', () => {
    const agUi = (authorization: string | undefined, input: Record<string, unknown>) =>
      fetch(`${host.url}/ag-ui`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify({ threadId: 'matrix', runId: 'matrix-run', tools: [], context: [], messages: [{ id: 'm', role: 'user', content: 'hi' }], ...input }),
      });
    const refusal = async (response: Response) => ({ status: response.status, headers: response.headers, body: JSON.parse(await response.text()) });

    it('answers 401 UNAUTHORIZED to a missing, malformed or wrong token, the metrics token included', async () => {
      for (const [name, authorization] of [...MALFORMED, ['metrics token', `Bearer ${METRICS}`] as [string, string]]) {
        assertAnswer(await refusal(await agUi(authorization, {})), { status: 401, code: 'UNAUTHORIZED' }, name);
      }
    });

    it('answers 403 FORBIDDEN to a token without the agUi grant, before the model', async () => {
      assertAnswer(await refusal(await agUi(`Bearer ${NO_GRANT}`, { forwardedProps: { provider: 'vendor', model: 'm' } })), FORBIDDEN, 'no grant');
      assert.equal(vendor.requests.length, 2, 'a refused request reached the provider');
    });

    it("keeps the owner's paused run from a stranger with every grant", async () => {
      // A tool answer and an interrupt decision naming the owner's job: the job is not the stranger's.
      const pause = `agd:${String(job.id)}:1`;
      const answer = await agUi(`Bearer ${STRANGER}`, { messages: [{ id: 'm', role: 'tool', toolCallId: pause, content: '{}' }] });
      assertAnswer(await refusal(answer), { status: 404, code: 'JOB_NOT_FOUND' }, 'stranger answering the owner\'s tool call');
      const resumed = await agUi(`Bearer ${STRANGER}`, { resume: [{ interruptId: pause, status: 'resolved', payload: { approved: true } }] });
      assertAnswer(await refusal(resumed), { status: 404, code: 'JOB_NOT_FOUND' }, 'stranger resuming the owner\'s interrupt');
      assert.equal(vendor.requests.length, 2, 'a refused request reached the provider');
    });
  });

  describe('POST /a2a (A2A agent)', () => {
    const a2a = (authorization: string | undefined, method: string, params: Record<string, unknown>) =>
      fetch(`${host.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
    const refusal = async (response: Response) => ({ status: response.status, headers: response.headers, body: JSON.parse(await response.text()) });

    it('answers 401 UNAUTHORIZED to a missing, malformed or wrong token, the metrics token included', async () => {
      for (const [name, authorization] of [...MALFORMED, ['metrics token', `Bearer ${METRICS}`] as [string, string]]) {
        assertAnswer(await refusal(await a2a(authorization, 'GetTask', { id: job.id })), { status: 401, code: 'UNAUTHORIZED' }, name);
      }
    });

    it('answers 403 FORBIDDEN to a token without the a2a grant, before the model', async () => {
      const message = { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }], metadata: { provider: 'vendor', model: 'm' } };
      assertAnswer(await refusal(await a2a(`Bearer ${NO_GRANT}`, 'SendMessage', { message })), FORBIDDEN, 'no grant');
      assert.equal(vendor.requests.length, 2, 'a refused request reached the provider');
    });

    it('serves its public card to anyone, whatever the token, naming no provider', async () => {
      for (const [name, authorization] of [...MALFORMED, ['owner', `Bearer ${OWNER}`] as [string, string]]) {
        const card = await fetch(`${host.url}/.well-known/agent-card.json`, { headers: authorization === undefined ? {} : { authorization } });
        assert.equal(card.status, 200, name);
        assert.doesNotMatch(await card.text(), /"(vendor|mock)"/, name);
      }
    });

    it("keeps the owner's task from a stranger with every grant", async () => {
      for (const method of ['GetTask', 'CancelTask', 'SubscribeToTask']) {
        const answer = await a2a(`Bearer ${STRANGER}`, method, { id: job.id });
        assert.equal(answer.status, 200, method);
        assert.match(await answer.text(), /No such job/, method);
      }
      const message = { messageId: 'm', taskId: String(job.id), role: 'ROLE_USER', parts: [{ text: 'approve' }] };
      assert.match(await (await a2a(`Bearer ${STRANGER}`, 'SendMessage', { message })).text(), /No such job/);
      assert.equal(vendor.requests.length, 2, 'a refused request reached the provider');
    });

    it("keeps the owner's push-notification configs and context (session) from a stranger with every grant", async () => {
      const config = { taskId: job.id, id: 'hook', url: 'https://127.0.0.1:9/hook', token: 't' };
      for (const [method, params] of [
        ['CreateTaskPushNotificationConfig', config],
        ['GetTaskPushNotificationConfig', { taskId: job.id, id: 'hook' }],
        ['ListTaskPushNotificationConfigs', { taskId: job.id }],
        ['DeleteTaskPushNotificationConfig', { taskId: job.id, id: 'hook' }],
        ['tasks/pushNotificationConfig/set', { taskId: job.id, pushNotificationConfig: config }],
        ['tasks/pushNotificationConfig/list', { id: job.id }],
      ] as [string, Record<string, unknown>][]) {
        const answer = await a2a(`Bearer ${STRANGER}`, method, params);
        assert.equal(answer.status, 200, method);
        assert.match(await answer.text(), /No such job/, method);
      }
      const message = { messageId: 'context', contextId: String(session.id), role: 'ROLE_USER', parts: [{ text: 'whose?' }], metadata: { provider: 'vendor', model: 'm' } };
      assert.match(await (await a2a(`Bearer ${STRANGER}`, 'SendMessage', { message })).text(), /SESSION_NOT_FOUND/);
      assert.equal(vendor.requests.length, 2, 'a refused request reached the provider');
    });
  });

  it("left the owner's indexed note intact and visible to the owner only", async () => {
    const searched = await fetch(`${host.url}/v1/retrieval/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ corpus: 'notes', query: 'owned note' }),
    });
    assert.equal(searched.status, 200);
    assert.deepEqual(((await searched.json()) as { hits: { chunkId: string }[] }).hits.map((hit) => hit.chunkId), ['owned-1']);
  });

  it('left the attacked approval and ticket intact for their owner', async () => {
    assert.deepEqual(effects, [], 'the guarded tool ran without its owner deciding');
    vendor.push({ turn: { text: 'approved' } }, { turn: { text: 'looked up' } });
    const decided = await fetch(`${host.url}/v1/approvals/decisions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' }),
    });
    assert.equal(decided.status, 200, await decided.clone().text());
    assert.equal(((await decided.json()) as { outcome: string }).outcome, 'approved');
    const first = open[0]!;
    let last: Record<string, unknown> | undefined;
    for await (const event of { [Symbol.asyncIterator]: () => first }) last = event;
    assert.equal(last?.type, 'run.completed');
    assert.deepEqual(effects, [{ to: 'ada' }]);

    const ticket = { executionId: execution.executionId, runId: execution.runId, callId: (execution.call as { id: string }).id };
    const completed = await fetch(`${host.url}/v1/tool-executions/results`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...ticket, output: { answer: 1 } }),
    });
    assert.equal(completed.status, 200);
    const second = open[1]!;
    for await (const event of { [Symbol.asyncIterator]: () => second }) last = event;
    assert.equal(last?.type, 'run.completed');
    assert.equal(vendor.requests.length, 4);
  });

});
