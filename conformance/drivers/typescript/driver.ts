/**
 * TypeScript conformance driver: runs the shared vectors against the reference peer and
 * the live-host scenarios with `AgenticClient`, then prints its report line
 * (conformance/CONTRACT.md).
 */
import { readFileSync } from 'node:fs';
import {
  AgenticClient,
  DriverError,
  type ApprovalDecision,
  type RunEvent,
  type RunRequest,
  type ToolExecutionIdentity,
  type ToolExecutionResult,
} from '../../../src/client/index.js';
import { fetchTrustingCa } from '../../../src/client/node-ca.js';
import { readJson, skipReason, type ConformanceCase, type ConformanceVectors, type SkipList, type VersioningVectors } from '../../peer/fixtures.js';

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

/** Client calls of the `operation` cases that post a body and check the receipt. */
const OPERATIONS: Record<string, (peer: AgenticClient, testCase: ConformanceCase) => Promise<unknown>> = {
  approval: (peer, testCase) => peer.decideApproval(testCase.decision as ApprovalDecision),
  'tool-result': (peer, testCase) => peer.completeTool(testCase.toolResult as ToolExecutionResult),
  'tool-progress': (peer, testCase) => peer.reportToolProgress(testCase.toolIdentity as ToolExecutionIdentity),
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
for (const [name, check] of Object.entries({ ...LIVE, ...(transport === 'https' ? TLS_LIVE : {}) })) await record(`live:${name}`, check);

console.log(JSON.stringify({ conformance: report }));
process.exit(report.failed > 0 ? 1 : 0);
