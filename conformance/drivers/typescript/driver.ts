/**
 * TypeScript conformance driver: runs the shared vectors against the reference peer and
 * the live-host scenarios with `AgenticClient`, then prints its report line
 * (conformance/CONTRACT.md).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  AgenticClient,
  checkCitations,
  DriverError,
  type ApprovalDecision,
  type ApprovalResolution,
  type PendingApproval,
  type RunEvent,
  type ToolContext,
  type RunRequest,
  type ToolExecutionIdentity,
  type ToolExecutionResult,
  type SessionCreate,
  type JobSubmit,
  type JobEventsRequest,
  type RunEventsRequest,
} from '../../../src/client/index.js';
import { fetchTrustingCa } from '../../../src/client/node-ca.js';
import { readJson, skipReason, type BaseUrlVectors, type ConformanceCase, type ConformanceVectors, type SkipList, type VersioningVectors } from '../../peer/fixtures.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; run this driver through conformance/run.ts`);
  return value;
};

const transport = env('AGENTICDRIVER_TEST_TRANSPORT');
const reference = env('AGENTICDRIVER_TEST_REFERENCE_URL');
const liveUrl = env('AGENTICDRIVER_TEST_URL');
const token = env('AGENTICDRIVER_TEST_TOKEN');
const restrictedToken = env('AGENTICDRIVER_TEST_RESTRICTED_TOKEN');
const ca = transport === 'https' ? readFileSync(env('AGENTICDRIVER_TEST_CA_FILE'), 'utf8') : undefined;
const vectors = readJson<ConformanceVectors>(env('AGENTICDRIVER_TEST_FIXTURES'));
const versioning = readJson<VersioningVectors>(env('AGENTICDRIVER_TEST_VERSIONING'));
const baseUrls = readJson<BaseUrlVectors>(env('AGENTICDRIVER_TEST_BASE_URLS'));
const skip = readJson<SkipList>(env('AGENTICDRIVER_TEST_SKIP'));
const metricsFetch = ca ? fetchTrustingCa(ca) : fetch;

const CASE_TIMEOUT_MS = 20_000;
const EXPECTED_TEXT = 'Hello 🌍';
const BASE_REQUEST: RunRequest = { provider: 'mock', model: 'demo', input: 'Hello' };
const REQUEST_FIELDS = ['approvals', 'session', 'applicationTools', 'tools', 'retrieval'] as const;

const report = { language: 'typescript', mode: 'async', transport, passed: 0, failed: 0, skipped: 0, failures: [] as { id: string; detail: string }[] };

function client(url: string, bearer = token): AgenticClient {
  return new AgenticClient({ url, token: bearer, ...(ca ? { ca } : {}) });
}

interface Outcome {
  code?: string;
  retryable?: boolean;
  text?: string;
  types: string[];
}

/** Streams a run; a failed/cancelled terminal counts as that error, like a thrown DriverError. */
async function streamOutcome(url: string, request: RunRequest, stopAfter?: (event: RunEvent) => boolean): Promise<Outcome> {
  const outcome: Outcome = { types: [] };
  try {
    for await (const event of client(url).stream(request, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) })) {
      outcome.types.push(event.type);
      if (event.type === 'run.completed') outcome.text = event.result.text;
      if (event.type === 'run.failed' || event.type === 'run.cancelled') {
        outcome.code = event.error.code;
        outcome.retryable = event.error.retryable;
      }
      if (stopAfter?.(event)) break;
    }
  } catch (error) {
    if (!(error instanceof DriverError)) throw error;
    outcome.code = error.code;
    outcome.retryable = error.retryable;
  }
  return outcome;
}

async function errorCode(call: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await call();
    return undefined;
  } catch (error) {
    if (error instanceof DriverError) return error.code;
    throw error;
  }
}

async function driverError(call: () => Promise<unknown>): Promise<DriverError | undefined> {
  try {
    await call();
    return undefined;
  } catch (error) {
    if (error instanceof DriverError) return error;
    throw error;
  }
}

const describeError = (error: DriverError | undefined) => (error ? `${error.code} (retryable ${error.retryable})` : 'success');

async function peerMetric(path: string, field: string): Promise<number> {
  const response = await metricsFetch(`${reference}/${path}`);
  if (!response.ok) throw new Error(`${path} answered HTTP ${response.status}: ${await response.text()}`);
  return ((await response.json()) as Record<string, number>)[field] ?? 0;
}

async function grows(path: string, field: string, before: number): Promise<boolean> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if ((await peerMetric(path, field)) > before) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

function expectError(expected: string | undefined, actual: string | undefined): string | undefined {
  if (expected) return actual === expected ? undefined : `expected ${expected}, got ${actual ?? 'success'}`;
  return actual === undefined ? undefined : `expected success, got ${actual}`;
}

/** The document every `ingest` case sends (CONTRACT.md); the peer answers the case's receipt. */
const INGEST_REQUEST = {
  corpus: 'library',
  document: { type: 'text', source: { id: 'paper', revision: 'r1' }, mediaType: 'text/markdown', text: '# Paper\n\nA short paper.\n' },
} as const;

/** Client calls of the `operation` cases that post a body and check the receipt. */
const OPERATIONS: Record<string, (peer: AgenticClient, testCase: ConformanceCase) => Promise<unknown>> = {
  approval: (peer, testCase) => peer.decideApproval(testCase.decision as ApprovalDecision),
  'tool-result': (peer, testCase) => peer.completeTool(testCase.toolResult as ToolExecutionResult),
  'tool-progress': (peer, testCase) => peer.reportToolProgress(testCase.toolIdentity as ToolExecutionIdentity),
  'session-create': (peer, testCase) => peer.createSession(testCase.sessionCreate as SessionCreate),
  'session-read': (peer, testCase) => peer.readSession((testCase.sessionIdentity as { id: string }).id),
  'session-delete': (peer, testCase) => peer.deleteSession((testCase.sessionIdentity as { id: string }).id),
  'job-submit': (peer, testCase) => peer.submitJob(testCase.jobSubmit as JobSubmit),
  'job-read': (peer, testCase) => peer.readJob((testCase.jobIdentity as { id: string }).id),
  'job-cancel': (peer, testCase) => peer.cancelJob((testCase.jobIdentity as { id: string }).id),
  'job-events': (peer, testCase) => peer.jobEvents(testCase.jobEvents as JobEventsRequest),
  'run-read': (peer, testCase) => peer.readRun((testCase.runIdentity as { runId: string }).runId),
  'run-events': (peer, testCase) => peer.runEvents(testCase.runEvents as RunEventsRequest),
  ingest: (peer) => peer.ingestDocument(INGEST_REQUEST),
};

async function runCase(testCase: ConformanceCase): Promise<string | undefined> {
  const url = `${reference}/fixtures/${encodeURIComponent(testCase.id)}/`;
  if (testCase.operation === 'providers' || testCase.operation === 'protocol') {
    const op = testCase.operation;
    const code = await errorCode(() => (op === 'providers' ? client(url).providers({ signal: AbortSignal.timeout(CASE_TIMEOUT_MS) }) : client(url).protocol()));
    return expectError(testCase.expectedError, code);
  }
  const operation = testCase.operation && OPERATIONS[testCase.operation];
  if (operation) return expectError(testCase.expectedError, await errorCode(() => operation(client(url), testCase)));
  if (testCase.operation) return `operation ${testCase.operation} is not implemented by the TypeScript client`;
  const request: RunRequest = { ...BASE_REQUEST };
  for (const field of REQUEST_FIELDS) if (testCase[field] !== undefined) Object.assign(request, { [field]: testCase[field] });
  if (testCase.cancel) {
    const before = await peerMetric('metrics', 'cancelled');
    const outcome = await streamOutcome(url, request, (event) => event.type === 'text.delta');
    if (outcome.code) return `expected a clean cancel, got ${outcome.code}`;
    return (await grows('metrics', 'cancelled', before)) ? undefined : 'the peer never saw the connection close';
  }
  const outcome = await streamOutcome(url, request);
  if (testCase.expectTransportError) {
    if (!outcome.code) return 'expected a transport failure, the stream succeeded';
    return undefined;
  }
  const problem = expectError(testCase.expectedError, outcome.code);
  if (problem || testCase.expectedError) return problem;
  return outcome.text === EXPECTED_TEXT ? undefined : `expected text ${JSON.stringify(EXPECTED_TEXT)}, got ${JSON.stringify(outcome.text)}`;
}

async function runVersioning(testCase: VersioningVectors['cases'][number]): Promise<string | undefined> {
  const outcome = await streamOutcome(`${reference}/versioning/${encodeURIComponent(testCase.id)}/`, BASE_REQUEST);
  const problem = expectError(testCase.expectedError, outcome.code);
  if (problem) return problem;
  if (testCase.retryable !== undefined && outcome.retryable !== testCase.retryable) return `expected retryable ${testCase.retryable}`;
  if (testCase.expectedTypes && outcome.types.join() !== testCase.expectedTypes.join()) {
    return `expected events ${testCase.expectedTypes.join(',')}, got ${outcome.types.join(',')}`;
  }
  return undefined;
}

const script = (actions: unknown[]) => JSON.stringify({ mockScript: { steps: [{ actions }] } });
const steps = (...actionLists: unknown[][]) => JSON.stringify({ mockScript: { steps: actionLists.map((actions) => ({ actions })) } });

const PAUSE: RunRequest['approvals'] = { mode: 'interactive', idlePolicy: 'pause' };
const GUARDED_REQUEST: RunRequest = {
  ...BASE_REQUEST,
  input: steps([{ toolCall: { name: 'guarded', arguments: { text: 'hi' } } }], [{ echoToolResults: true }]),
  tools: ['guarded'],
  approvals: PAUSE,
};
const LOOKUP_REQUEST: RunRequest = {
  ...BASE_REQUEST,
  input: steps([{ toolCall: { name: 'application_lookup', arguments: { query: 'x' } } }], [{ echoToolResults: true }]),
  tools: ['application_lookup'],
  applicationTools: [
    {
      name: 'application_lookup',
      description: 'Look something up',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      outputSchema: { type: 'object' },
    },
  ],
};

/** The first failed expectation of a scenario, or undefined when all hold. */
function expectAll(...expectations: [boolean, string][]): string | undefined {
  return expectations.find(([holds]) => !holds)?.[1];
}

const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((event): event is Extract<RunEvent, { type: T }> => event.type === type);
const terminal = (events: RunEvent[]) => {
  const last = events.at(-1);
  if (last?.type === 'run.completed') return `completed ${last.result.text}`;
  if (last?.type === 'run.failed' || last?.type === 'run.cancelled') return `${last.type} ${last.error.code}`;
  return `no terminal event after ${events.map((event) => event.type).join(',')}`;
};

/** Streams a live run, awaiting `onEvent` for each event before reading the next. */
async function liveEvents(events: AsyncIterable<RunEvent>, onEvent: (event: RunEvent) => Promise<void> = async () => undefined): Promise<RunEvent[]> {
  const seen: RunEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    await onEvent(event);
  }
  return seen;
}

/** approval-deny / approval-cancel: decide once, then the run ends with `end`, and the tool never ran. */
async function decideAndEnd(decision: 'deny' | 'cancel', outcome: string, end: string): Promise<string | undefined> {
  const live = client(liveUrl);
  let receipt: ApprovalResolution | undefined;
  const events = await liveEvents(live.stream(GUARDED_REQUEST, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) }), async (event) => {
    if (event.type === 'approval.requested') receipt = await live.approval(event).decide(decision);
  });
  return expectAll(
    [receipt?.outcome === outcome, `receipt ${JSON.stringify(receipt)}`],
    [ofType(events, 'approval.resolved')[0]?.resolution.outcome === outcome, 'approval.resolved does not carry the decision'],
    [ofType(events, 'tool.completed').length === 0, 'the tool ran'],
    [terminal(events) === end, terminal(events)],
  );
}

/** A key no earlier mode, transport or harness run used, so each run of the scenario starts fresh. */
const freshKey = () => `conformance-${randomUUID()}`;

/** idempotency: replays by key (JSON and SSE), a different request under the key, a duplicate while the first runs. */
async function idempotency(): Promise<string | undefined> {
  const live = client(liveUrl);
  const request: RunRequest = { ...BASE_REQUEST, idempotencyKey: freshKey() };
  const first = await live.run(request);
  const again = await live.run(request);
  const events = await liveEvents(live.stream(request, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) }));
  const conflict = await driverError(() => live.run({ ...request, input: 'Other' }));
  const slow: RunRequest = { ...BASE_REQUEST, input: script([{ stallMs: 400 }, { text: 'late' }]), idempotencyKey: freshKey() };
  const running = live.run(slow).then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  const busy = await driverError(() => live.run(slow));
  const late = await running;
  if ('error' in late) throw late.error;
  const retried = await live.run(slow);
  return expectAll(
    [first.text === 'Hello' && again.text === 'Hello', `texts ${JSON.stringify([first.text, again.text])}`],
    [again.runId === first.runId, `the repeat has runId ${again.runId}, the first ${first.runId}`],
    [events[0]?.type === 'run.started' && terminal(events) === 'completed Hello', `streamed replay: ${terminal(events)}`],
    [events.every((event, index) => event.runId === first.runId && event.sequence === index + 1), 'streamed replay: runId or sequence differs'],
    [conflict?.code === 'IDEMPOTENCY_CONFLICT' && conflict.retryable === false, `a different request under the key: ${describeError(conflict)}`],
    [busy?.code === 'OPERATION_IN_PROGRESS' && busy.retryable === true, `a duplicate while running: ${describeError(busy)}`],
    [late.result.text === 'late', `the first run's text ${JSON.stringify(late.result.text)}`],
    [retried.runId === late.result.runId && retried.text === 'late', `the retry got ${retried.runId} ${JSON.stringify(retried.text)}`],
  );
}

/** The job-tail script: three texts with pauses, so the first tail stops while the job still runs. */
const JOB_INPUT = script([{ text: 'one ' }, { stallMs: 150 }, { text: 'two ' }, { stallMs: 150 }, { text: 'three' }]);

/** job-tail: submit by key, tail three events and drop the connection, resume from the last sequence to the end. */
async function jobTail(): Promise<string | undefined> {
  const live = client(liveUrl);
  const submission: JobSubmit = { key: freshKey(), request: { ...BASE_REQUEST, input: JOB_INPUT } };
  const job = await live.submitJob(submission);
  const first: RunEvent[] = [];
  for await (const event of live.tailJob(job.id, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) })) {
    first.push(event);
    if (first.length === 3) break;
  }
  const after = first.at(-1)?.sequence ?? 0;
  const rest = await liveEvents(live.tailJob(job.id, { after, signal: AbortSignal.timeout(CASE_TIMEOUT_MS) }));
  const events = [...first, ...rest];
  const read = await live.readJob(job.id);
  const again = await live.submitJob(submission);
  return expectAll(
    [first.length === 3, `the first tail delivered ${first.length} events`],
    [events.every((event, index) => event.sequence === index + 1), `sequences ${events.map((event) => event.sequence).join(',')}`],
    [terminal(events) === 'completed one two three', terminal(events)],
    [read.state === 'completed' && read.cursor === events.length, `readJob: ${read.state} at cursor ${read.cursor}, ${events.length} events tailed`],
    [again.id === job.id, `the same key and request again got job ${again.id}, the first ${job.id}`],
  );
}

/** run-read-back: an attached run read back by its run id, its events paged; another subject gets RUN_NOT_FOUND. */
async function runReadBack(): Promise<string | undefined> {
  const live = client(liveUrl);
  const result = await live.run(BASE_REQUEST);
  const read = await live.readRun(result.runId);
  const page = await live.runEvents({ runId: result.runId, after: 0 });
  const other = await driverError(() => client(liveUrl, restrictedToken).readRun(result.runId));
  return expectAll(
    [read.mode === 'attached' && read.state === 'completed', `readRun: ${read.mode} ${read.state}`],
    [read.result?.text === 'Hello' && read.result.runId === result.runId, `readRun result ${JSON.stringify(read.result)}`],
    [page.events.length === read.cursor && page.events.every((event, index) => event.sequence === index + 1), `runEvents: ${page.events.length} events, cursor ${read.cursor}`],
    [terminal(page.events) === 'completed Hello' && !page.hasMore, `runEvents ends ${terminal(page.events)}, hasMore ${page.hasMore}`],
    [other?.code === 'RUN_NOT_FOUND', `another subject: ${describeError(other)}`],
  );
}

/** run-follow: a background run followed by its run id, three events, then resumed after the last one to the end. */
async function runFollow(): Promise<string | undefined> {
  const live = client(liveUrl);
  const job = await live.submitJob({ key: freshKey(), request: { ...BASE_REQUEST, input: JOB_INPUT } });
  const first: RunEvent[] = [];
  for await (const event of live.followRun(job.runId, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) })) {
    first.push(event);
    if (first.length === 3) break;
  }
  const after = first.at(-1)?.sequence ?? 0;
  const events = [...first, ...(await liveEvents(live.followRun(job.runId, { after, signal: AbortSignal.timeout(CASE_TIMEOUT_MS) })))];
  const read = await live.readRun(job.runId);
  return expectAll(
    [first.length === 3, `the first follow delivered ${first.length} events`],
    [events.every((event, index) => event.sequence === index + 1), `sequences ${events.map((event) => event.sequence).join(',')}`],
    [terminal(events) === 'completed one two three', terminal(events)],
    [read.mode === 'background' && read.jobId === job.id, `readRun: ${read.mode}, job ${read.jobId}`],
    [read.state === 'completed' && read.cursor === events.length, `readRun: ${read.state} at cursor ${read.cursor}, ${events.length} events followed`],
  );
}

/** session: create, run at revision 0, a stale revision conflicts, read the history, delete, then not found. */
async function session(): Promise<string | undefined> {
  const live = client(liveUrl);
  const created = await live.createSession({ provider: 'mock', model: 'demo', mode: 'history' });
  const binding = { id: created.session.id, revision: 0 };
  const result = await live.run({ ...BASE_REQUEST, session: binding });
  const stale = await driverError(() => live.run({ ...BASE_REQUEST, session: binding }));
  const read = await live.readSession(created.session.id);
  const deleted = await live.deleteSession(created.session.id);
  const gone = await driverError(() => live.readSession(created.session.id));
  return expectAll(
    [created.session.revision === 0, `created at revision ${created.session.revision}`],
    [result.text === 'Hello' && result.session?.revision === 1, `the run: text ${JSON.stringify(result.text)}, session ${JSON.stringify(result.session)}`],
    [stale?.code === 'SESSION_REVISION_CONFLICT', `revision 0 again: ${describeError(stale)}`],
    [read.session.revision === 1 && read.history.length === 2, `readSession: revision ${read.session.revision}, ${read.history.length} messages`],
    [deleted.deleted === true && deleted.id === created.session.id, `deleteSession ${JSON.stringify(deleted)}`],
    [gone?.code === 'SESSION_NOT_FOUND', `reading the deleted session: ${describeError(gone)}`],
  );
}

/** The Markdown document of the retrieval scenario: the same in every driver, mode and transport (a re-ingest is `unchanged`). */
const RETRIEVAL_DOCUMENT = {
  corpus: 'default',
  document: {
    type: 'text',
    source: { id: 'conformance-lighthouse', revision: 'r1' },
    mediaType: 'text/markdown',
    text: '# Lighthouse keeping\n\nThe lamp is lit at dusk and trimmed every four hours.\n\n## Fog\n\nIn fog the keeper sounds the horn every thirty seconds.\n',
  },
} as const;

/** retrieval: ingest a Markdown document, search it, run grounded on it, and check the run's citations. */
async function retrieval(): Promise<string | undefined> {
  const live = client(liveUrl);
  const scope = { corpus: 'default', query: 'horn', sourceIds: ['conformance-lighthouse'] };
  const receipt = await live.ingestDocument(RETRIEVAL_DOCUMENT);
  const found = await live.searchRetrieval(scope);
  const result = await live.run({ ...BASE_REQUEST, input: 'When is the horn sounded?', retrieval: scope });
  const hits = result.retrieval?.hits ?? [];
  const cited = checkCitations(result).map((source) => source.id);
  return expectAll(
    [receipt.ingestion.format === 'markdown' && receipt.chunks >= 1, `ingest receipt ${JSON.stringify(receipt)}`],
    [found.hits.some((hit) => hit.text.includes('horn')), `search found ${JSON.stringify(found.hits.map((hit) => hit.text))}`],
    // A vector index as 1.0 defines it (what installed clients require), ranked as the additive field says.
    [found.index.metric === 'cosine' && found.index.providerId === 'builtin' && found.index.ranking === 'bm25', `search index ${JSON.stringify(found.index)}`],
    [hits.length >= 1, 'the run retrieved nothing'],
    [JSON.stringify(cited) === JSON.stringify(hits.map((hit) => hit.chunkId)), `the answer cites ${JSON.stringify(cited)}, the hits are ${JSON.stringify(hits.map((hit) => hit.chunkId))}`],
  );
}

const LIVE: Record<string, () => Promise<string | undefined>> = {
  protocol: async () => {
    const info = await client(liveUrl).protocol();
    if (info.version !== '1.0' || !info.supportedVersions.includes('1.0')) return `unexpected versions ${JSON.stringify(info)}`;
    const missing = ['json-results', 'event-stream'].filter((feature) => !info.features.includes(feature));
    return missing.length ? `features lack ${missing.join(', ')}` : undefined;
  },
  providers: async () => {
    const main = await client(liveUrl).providers();
    if (!main.some((provider) => provider.id === 'mock' && provider.capabilities.tools === true)) return `main token sees ${JSON.stringify(main.map((p) => p.id))}`;
    const restricted = await client(liveUrl, restrictedToken).providers();
    return restricted.length === 0 ? undefined : `restricted token sees ${JSON.stringify(restricted.map((p) => p.id))}`;
  },
  run: async () => {
    const result = await client(liveUrl).run(BASE_REQUEST);
    return result.text === 'Hello' ? undefined : `text ${JSON.stringify(result.text)}`;
  },
  stream: async () => {
    const events: RunEvent[] = [];
    for await (const event of client(liveUrl).stream(BASE_REQUEST)) events.push(event);
    if (events[0]?.type !== 'run.started' || events.at(-1)?.type !== 'run.completed') return `events ${events.map((e) => e.type).join(',')}`;
    return events.every((event, index) => event.sequence === index + 1) ? undefined : 'sequence is not +1';
  },
  unauthorized: async () => expectError('UNAUTHORIZED', await errorCode(() => client(liveUrl, 'wrong-token-wrong-token-wrong-token').run(BASE_REQUEST))),
  forbidden: async () =>
    expectError('FORBIDDEN', await errorCode(() => client(liveUrl, restrictedToken).run(BASE_REQUEST))) ??
    expectError('FORBIDDEN', await errorCode(() => client(liveUrl).run({ ...BASE_REQUEST, tools: ['nope'] }))),
  quiet: async () => {
    const result = await client(liveUrl).run({ ...BASE_REQUEST, input: script([{ stallMs: 80 }, { text: 'quiet' }]) });
    return result.text === 'quiet' ? undefined : `text ${JSON.stringify(result.text)}`;
  },
  'idle-timeout': async () =>
    expectError('IDLE_TIMEOUT', await errorCode(() => client(liveUrl).run({ ...BASE_REQUEST, input: script([{ hang: true }]), idleTimeoutMs: 30 }))),
  progress: async () => {
    const result = await client(liveUrl).run({ ...BASE_REQUEST, input: script([{ progress: 16, everyMs: 20 }, { text: 'done' }]), idleTimeoutMs: 150 });
    return result.text === 'done' ? undefined : `text ${JSON.stringify(result.text)}`;
  },
  cancel: async () => {
    const before = await peerMetric('live-metrics', 'cancelled');
    const outcome = await streamOutcome(liveUrl, { ...BASE_REQUEST, input: script([{ hang: true }]) }, (event) => event.type === 'run.started');
    if (outcome.code) return `stream failed with ${outcome.code}`;
    return (await grows('live-metrics', 'cancelled', before)) ? undefined : 'the host never counted a cancelled run';
  },
  idempotency,
  'job-tail': jobTail,
  'run-read-back': runReadBack,
  'run-follow': runFollow,
  session,
  retrieval,
};

const INTERACTIVE_LIVE: Record<string, () => Promise<string | undefined>> = {
  'approval-approve': async () => {
    const live = client(liveUrl);
    let pending: PendingApproval | undefined;
    let receipt: ApprovalResolution | undefined;
    const events = await liveEvents(live.stream(GUARDED_REQUEST, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) }), async (event) => {
      if (event.type !== 'approval.requested') return;
      pending = live.approval(event);
      receipt = await pending.approve();
    });
    return expectAll(
      [pending !== undefined, 'no approval.requested'],
      [receipt?.outcome === 'approved' && receipt.callId === pending?.call.id, `receipt ${JSON.stringify(receipt)}`],
      [ofType(events, 'approval.resolved')[0]?.resolution.outcome === 'approved', 'approval.resolved is not approved'],
      [ofType(events, 'tool.completed').length === 1, 'no tool.completed'],
      [terminal(events) === 'completed [{"approved":true,"arguments":{"text":"hi"}}]', terminal(events)],
    ) ?? expectError('APPROVAL_NOT_FOUND', await errorCode(() => pending!.approve()));
  },
  'background-approval': async () => {
    const live = client(liveUrl);
    const job = await live.submitJob({ key: freshKey(), request: GUARDED_REQUEST });
    let receipt: ApprovalResolution | undefined;
    const events = await liveEvents(live.followRun(job.runId, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) }), async (event) => {
      if (event.type === 'approval.requested') receipt = await live.approval(event).approve();
    });
    const result = await live.waitRun(job.runId, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) });
    const read = await live.readRun(job.runId);
    return expectAll(
      [receipt?.outcome === 'approved', `receipt ${JSON.stringify(receipt)}`],
      [ofType(events, 'approval.resolved')[0]?.resolution.outcome === 'approved', 'approval.resolved is not approved'],
      [ofType(events, 'tool.completed').length === 1, 'no tool.completed'],
      [terminal(events) === 'completed [{"approved":true,"arguments":{"text":"hi"}}]', terminal(events)],
      [events.every((event, index) => event.sequence === index + 1), `sequences ${events.map((event) => event.sequence).join(',')}`],
      [result.runId === job.runId && result.text === '[{"approved":true,"arguments":{"text":"hi"}}]', `waitRun ${JSON.stringify(result)}`],
      [read.mode === 'background' && read.state === 'completed' && read.cursor === events.length, `readRun: ${read.mode} ${read.state} at cursor ${read.cursor}`],
    );
  },
  'approval-deny': () => decideAndEnd('deny', 'denied', 'run.failed APPROVAL_DENIED'),
  'approval-cancel': () => decideAndEnd('cancel', 'cancelled', 'run.cancelled CANCELLED'),
  'approval-expire': async () => {
    const request = { ...GUARDED_REQUEST, approvals: { ...PAUSE!, expiresAfterMs: 20 } };
    const events = await liveEvents(client(liveUrl).stream(request, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) }));
    return expectAll(
      [ofType(events, 'approval.resolved')[0]?.resolution.outcome === 'expired', 'approval.resolved is not expired'],
      [terminal(events) === 'run.failed APPROVAL_EXPIRED', terminal(events)],
    );
  },
  'application-tool': async () => {
    const live = client(liveUrl);
    const receipts: string[] = [];
    let second: string | undefined;
    const events = await liveEvents(live.stream(LOOKUP_REQUEST, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) }), async (event) => {
      if (event.type !== 'tool.execution.requested') return;
      const execution = live.execution(event);
      receipts.push((await execution.progress()).status, (await execution.complete({ answer: 42 })).status);
      second = await errorCode(() => execution.complete({ answer: 43 }));
    });
    return expectAll(
      [receipts.join() === 'progress,accepted', `receipts ${receipts.join()}`],
      [second === 'TOOL_EXECUTION_NOT_FOUND', `a second result got ${second ?? 'accepted'}`],
      [terminal(events) === 'completed [{"answer":42}]', terminal(events)],
    );
  },
  'application-tool-approved': async () => {
    const live = client(liveUrl);
    const definition = { ...LOOKUP_REQUEST.applicationTools![0]!, requiresApproval: true };
    const request: RunRequest = { ...LOOKUP_REQUEST, applicationTools: [definition], approvals: PAUSE };
    let receipt: ApprovalResolution | undefined;
    let progress: string | undefined;
    const functions = {
      application_lookup: async (args: Record<string, unknown>, context: ToolContext) => {
        progress = (await context.progress()).status;
        return { answer: 42, query: args.query };
      },
    };
    const events = await liveEvents(live.streamWithTools(request, functions, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) }), async (event) => {
      if (event.type === 'approval.requested') receipt = await live.approval(event).approve();
    });
    const execution = ofType(events, 'tool.execution.requested')[0]?.execution;
    const stale = execution && (await errorCode(() => live.execution(execution).complete({ answer: 0 })));
    return expectAll(
      [receipt?.outcome === 'approved', `approval receipt ${JSON.stringify(receipt)}`],
      [events.findIndex((event) => event.type === 'approval.resolved') < events.findIndex((event) => event.type === 'tool.execution.requested'), 'executed before the approval'],
      [progress === 'progress', `progress receipt ${progress}`],
      [stale === 'TOOL_EXECUTION_NOT_FOUND', `a stale result got ${stale ?? 'accepted'}`],
      [terminal(events) === 'completed [{"answer":42,"query":"x"}]', terminal(events)],
    );
  },
};

const TLS_LIVE: Record<string, () => Promise<string | undefined>> = {
  'tls-untrusted': async () => ((await errorCode(() => client(env('AGENTICDRIVER_TEST_UNTRUSTED_URL')).protocol())) ? undefined : 'the untrusted host was accepted'),
  'tls-mismatch': async () => ((await errorCode(() => client(env('AGENTICDRIVER_TEST_MISMATCH_URL')).protocol())) ? undefined : 'the mismatched host name was accepted'),
};

async function record(id: string, check: () => Promise<string | undefined>): Promise<void> {
  let detail: string | undefined;
  try {
    detail = await check();
  } catch (error) {
    detail = `threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  }
  if (detail === undefined) report.passed += 1;
  else {
    report.failed += 1;
    report.failures.push({ id, detail });
  }
}

for (const testCase of vectors.cases) {
  if (skipReason(skip, testCase)) report.skipped += 1;
  else await record(testCase.id, () => runCase(testCase));
}
for (const testCase of versioning.cases) {
  if (skipReason(skip, testCase)) report.skipped += 1;
  else await record(`versioning:${testCase.id}`, () => runVersioning(testCase));
}
for (const testCase of baseUrls.cases) {
  await record(`base-url:${testCase.id}`, async () => {
    try {
      new AgenticClient({ url: testCase.url, token: baseUrls.token });
    } catch (error) {
      if (error instanceof DriverError) return expectError(testCase.expectedError, error.code);
      throw error;
    }
    return expectError(testCase.expectedError, undefined);
  });
}
for (const [name, check] of Object.entries({ ...LIVE, ...INTERACTIVE_LIVE, ...(transport === 'https' ? TLS_LIVE : {}) })) await record(`live:${name}`, check);

console.log(JSON.stringify({ conformance: report }));
process.exit(report.failed > 0 ? 1 : 0);
