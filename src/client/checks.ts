/**
 * Client-side cross-field rules: what JSON Schema alone cannot say about a host's answer
 * (result vs request, context manifests, retrieval links, ingestion coverage, sessions,
 * approvals, application-tool executions, job records and pages). Each check returns a problem description, or
 * undefined when the value is consistent; callers turn problems into typed errors.
 */
import type {
  ApprovalDecision,
  ApprovalRequest,
  ApprovalResolution,
  JobEventPage,
  JobEventsRequest,
  JobInfo,
  JobList,
  JobListRequest,
  RetrievalResult,
  RetrievalSearch,
  RunEvent,
  RunRequest,
  RunResult,
  SessionCreate,
  SessionDeleteResult,
  SessionList,
  SessionListRequest,
  SessionSnapshot,
  ToolExecution,
  ToolExecutionIdentity,
  ToolExecutionReceipt,
} from '../protocol/schemas.js';
import { TERMINAL_EVENT_TYPES } from '../protocol/terminal-events.js';

type Problem = string | undefined;

/** How many a list holds when the request names no limit. */
export const DEFAULT_LIST_LIMIT = 20;
type Json = Record<string, unknown>;

/** Most application-tool executions one run may request. */
export const MAX_EXECUTIONS_PER_RUN = 2048;
/** Retrieval defaults a host applies when the request leaves them out. */
export const DEFAULT_RETRIEVAL_LIMIT = 8;
export const DEFAULT_RETRIEVAL_MAX_CONTEXT_BYTES = 65_536;

const utf8 = new TextEncoder();
const utf8Bytes = (text: string): number => utf8.encode(text).length;

function first(...problems: Problem[]): Problem {
  return problems.find((problem) => problem !== undefined);
}

function firstOf<T>(items: readonly T[] | undefined, check: (item: T, index: number) => Problem): Problem {
  for (const [index, item] of (items ?? []).entries()) {
    const problem = check(item, index);
    if (problem) return problem;
  }
  return undefined;
}

function orderedRange(location: Json | undefined, low: string, high: string, where: string): Problem {
  const start = location?.[low];
  const end = location?.[high];
  if (end === undefined) return undefined;
  return typeof start !== 'number' || (end as number) < start ? `${where} has ${high} without a ${low} at or before it` : undefined;
}

function locationProblem(location: Json | undefined, where: string): Problem {
  return first(orderedRange(location, 'page', 'pageEnd', where), orderedRange(location, 'startLine', 'endLine', where));
}

function uriProblem(uri: unknown, where: string): Problem {
  if (typeof uri !== 'string') return undefined;
  try {
    const parsed = new URL(uri);
    return parsed.username || parsed.password ? `${where}.uri carries credentials` : undefined;
  } catch {
    return `${where}.uri is not a URL`;
  }
}

function duplicates(values: readonly unknown[]): boolean {
  return new Set(values).size !== values.length;
}

// ---------------------------------------------------------------------------
// Run results

/** `run.started` must name the provider and model the request asked for. */
export function checkRunStarted(event: { provider: string; model: string }, request: RunRequest): Problem {
  if (event.provider !== request.provider || event.model !== request.model) {
    return `run.started names ${event.provider}/${event.model}, not the requested ${request.provider}/${request.model}`;
  }
  return undefined;
}

export function checkRunResult(result: RunResult, request: RunRequest, runId: string): Problem {
  if (result.runId !== runId) return `result.runId ${result.runId} is not the stream's run ${runId}`;
  if (result.provider !== request.provider || result.model !== request.model) {
    return `result names ${result.provider}/${result.model}, not the requested ${request.provider}/${request.model}`;
  }
  return first(checkResultSession(result, request), checkContextManifests(result), checkRetrievalResult(result, request));
}

function checkResultSession(result: RunResult, request: RunRequest): Problem {
  const session = result.session;
  if (!request.session) return session === undefined ? undefined : 'result.session is present but the request bound no session';
  if (!session) return 'result.session is missing for a session-bound run';
  if (session.id.toLowerCase() !== request.session.id.toLowerCase()) return 'result.session.id is not the requested session';
  if (session.revision !== request.session.revision + 1) return `result.session.revision must be ${request.session.revision + 1}`;
  if (session.provider !== request.provider || session.model !== request.model) return 'result.session changed provider or model';
  if (session.state !== 'ready') return `result.session.state is ${session.state}, not ready`;
  return checkSessionInfo(session as unknown as Json);
}

/** Timestamp order and expiry rules of a session description. */
export function checkSessionInfo(session: Json): Problem {
  const created = Date.parse(String(session.createdAt));
  const updated = Date.parse(String(session.updatedAt));
  if (updated < created) return 'session.updatedAt is before createdAt';
  if (session.state === 'running') return session.expiresAt === undefined ? undefined : 'a running session has no expiresAt';
  if (session.expiresAt === undefined) return `a ${String(session.state)} session must carry expiresAt`;
  return Date.parse(String(session.expiresAt)) > updated ? undefined : 'session.expiresAt must be later than updatedAt';
}

/** result.sources and result.artifacts: unique sources, sane locations, no credentials, artifacts cite listed sources. */
function checkContextManifests(result: RunResult): Problem {
  const sources = (result.sources ?? []) as unknown as Json[];
  if (duplicates(sources.map((source) => source.id))) return 'result.sources lists a source twice';
  const ids = new Set(sources.map((source) => source.id));
  return first(
    firstOf(sources, (source, index) => first(locationProblem(source.location as Json, `result.sources[${index}].location`), uriProblem(source.uri, `result.sources[${index}]`))),
    firstOf(result.artifacts, (artifact, index) =>
      artifact.sourceIds.find((id) => !ids.has(id)) !== undefined ? `result.artifacts[${index}] cites a source not in result.sources` : undefined,
    ),
  );
}

/** Retrieval evidence: present exactly when asked for, in scope and budget, each hit cited by exactly one retrieval manifest. */
function checkRetrievalResult(result: RunResult, request: RunRequest): Problem {
  const retrieval = result.retrieval;
  const manifests = ((result.sources ?? []) as unknown as Json[]).filter((source) => source.origin === 'retrieval');
  if (!request.retrieval) {
    if (retrieval !== undefined) return 'result.retrieval is present but the request asked for no retrieval';
    return manifests.length > 0 ? 'result.sources cites retrieval the request did not ask for' : undefined;
  }
  if (!retrieval) return 'result.retrieval is missing although the request asked for retrieval';
  const options = request.retrieval;
  if (retrieval.corpus !== options.corpus) return `result.retrieval.corpus ${retrieval.corpus} is not the requested corpus`;
  if (duplicates(retrieval.hits.map((hit) => hit.chunkId))) return 'result.retrieval lists a chunk twice';
  const limit = options.limit ?? DEFAULT_RETRIEVAL_LIMIT;
  if (retrieval.hits.length > limit) return `result.retrieval has more than ${limit} hits`;
  const maxBytes = options.maxContextBytes ?? DEFAULT_RETRIEVAL_MAX_CONTEXT_BYTES;
  if (retrieval.hits.reduce((sum, hit) => sum + utf8Bytes(hit.text), 0) > maxBytes) return `result.retrieval hits carry more than ${maxBytes} bytes of text`;
  if (manifests.length !== retrieval.hits.length) return 'result.sources must hold exactly one retrieval manifest per hit';
  const byId = new Map(manifests.map((manifest) => [manifest.id, manifest]));
  const allowed = options.sourceIds ? new Set(options.sourceIds) : undefined;
  return firstOf(retrieval.hits, (hit, index) => {
    const where = `result.retrieval.hits[${index}]`;
    if (allowed && !allowed.has(hit.source.id)) return `${where} comes from source ${hit.source.id}, which the request did not select`;
    if (options.minScore !== undefined && hit.score < options.minScore) return `${where}.score is below the requested minScore`;
    const manifest = byId.get(hit.chunkId);
    if (!manifest) return `${where} has no retrieval manifest in result.sources`;
    if (manifest.revision !== hit.source.revision) return `${where} and its manifest disagree on the revision`;
    if ((manifest.location as Json | undefined)?.documentId !== hit.source.id) return `${where} and its manifest disagree on location.documentId`;
    if (manifest.bytes !== utf8Bytes(hit.text)) return `${where} and its manifest disagree on the byte count`;
    return first(
      locationProblem(hit.source.location as Json, `${where}.source.location`),
      uriProblem(hit.source.uri, `${where}.source`),
      hit.ingestion ? checkIngestionManifest(hit.ingestion as unknown as Json, `${where}.ingestion`) : undefined,
    );
  });
}

/** Ingestion coverage: pages exactly for PDF, messages exactly for email, counts that add up, OCR named exactly when used. */
export function checkIngestionManifest(manifest: Json, where = 'ingestion'): Problem {
  const indexed = manifest.indexedTextBytes as number;
  if (indexed < 1) return `${where} indexed no text`;
  if (indexed > (manifest.extractedTextBytes as number)) return `${where} indexed more text than it extracted`;
  const pages = manifest.pages as { total: number; ocr: number[]; empty: number[] } | undefined;
  const messages = manifest.messages as { total: number; empty: number } | undefined;
  const pdf = manifest.format === 'pdf';
  const email = manifest.format === 'email';
  if (pdf !== (pages !== undefined)) return pdf ? `${where} must report page coverage for a PDF` : `${where} reports page coverage for a ${String(manifest.format)} document`;
  if (email !== (messages !== undefined)) {
    return email ? `${where} must report message coverage for an email` : `${where} reports message coverage for a ${String(manifest.format)} document`;
  }
  const ocrUsed = (pages?.ocr.length ?? 0) > 0;
  if (ocrUsed !== (manifest.ocrExtractor !== undefined)) return `${where} must name an OCR extractor exactly when some pages were OCRed`;
  const chunks = manifest.chunks as number;
  if (pages) {
    if (duplicates(pages.ocr) || duplicates(pages.empty)) return `${where}.pages lists a page twice`;
    if ([...pages.ocr, ...pages.empty].some((page) => page > pages.total)) return `${where}.pages names a page beyond the total`;
    if (pages.ocr.some((page) => pages.empty.includes(page))) return `${where}.pages lists a page as both OCR and empty`;
    if (pages.empty.length >= pages.total) return `${where} has no page with text`;
    if (chunks < pages.total - pages.empty.length) return `${where} has fewer chunks than pages with text`;
  }
  if (messages) {
    if (messages.empty >= messages.total) return `${where} has no message with text`;
    if (chunks < messages.total - messages.empty) return `${where} has fewer chunks than messages with text`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Retrieval search and index/ingest receipts

/**
 * A search answer: the requested corpus, at most `limit` hits (default 8) with unique chunk
 * ids, every hit from a selected source and at or above minScore, and at most
 * maxContextBytes (default 65,536) of hit text in total.
 */
export function checkRetrievalSearch(result: RetrievalResult, request: RetrievalSearch): Problem {
  if (result.corpus !== request.corpus) return `the answer searched corpus ${result.corpus}, not the requested ${request.corpus}`;
  const limit = request.limit ?? DEFAULT_RETRIEVAL_LIMIT;
  if (result.hits.length > limit) return `the answer has ${result.hits.length} hits, more than the limit ${limit}`;
  if (duplicates(result.hits.map((hit) => hit.chunkId))) return 'the answer lists a chunk twice';
  const maxBytes = request.maxContextBytes ?? DEFAULT_RETRIEVAL_MAX_CONTEXT_BYTES;
  if (result.hits.reduce((sum, hit) => sum + utf8Bytes(hit.text), 0) > maxBytes) return `the hits carry more than ${maxBytes} bytes of text`;
  const allowed = request.sourceIds ? new Set(request.sourceIds) : undefined;
  return firstOf(result.hits, (hit, index) => {
    const where = `hits[${index}]`;
    if (allowed && !allowed.has(hit.source.id)) return `${where} comes from source ${hit.source.id}, which the request did not select`;
    if (request.minScore !== undefined && hit.score < request.minScore) return `${where}.score ${hit.score} is below minScore ${request.minScore}`;
    return first(
      locationProblem(hit.source.location as Json, `${where}.source.location`),
      hit.ingestion ? checkIngestionManifest(hit.ingestion as unknown as Json, `${where}.ingestion`) : undefined,
    );
  });
}

/** What an index, delete or ingest receipt must echo. */
export interface SourceRevision {
  corpus: string;
  sourceId: string;
  revision: string;
}

interface IndexReceiptLike extends SourceRevision {
  chunks?: number;
  ingestion?: unknown;
}

/**
 * An index/delete/ingest receipt names the corpus, source and revision asked for; an ingestion
 * manifest, required when `ingest`, counts the same chunks as the receipt and is consistent.
 */
export function checkSourceReceipt(receipt: IndexReceiptLike, expected: SourceRevision, ingest = false): Problem {
  if (receipt.corpus !== expected.corpus) return `the receipt names corpus ${receipt.corpus}, not ${expected.corpus}`;
  if (receipt.sourceId !== expected.sourceId) return `the receipt names source ${receipt.sourceId}, not ${expected.sourceId}`;
  if (receipt.revision !== expected.revision) return `the receipt names revision ${receipt.revision}, not ${expected.revision}`;
  const manifest = receipt.ingestion as Json | undefined;
  if (!manifest) return ingest ? 'an ingestion receipt must carry its ingestion manifest' : undefined;
  if (manifest.chunks !== receipt.chunks) return `the ingestion manifest counts ${String(manifest.chunks)} chunks, the receipt ${String(receipt.chunks)}`;
  return checkIngestionManifest(manifest);
}

// ---------------------------------------------------------------------------
// Negotiated interactive events

export function checkApprovalRequest(approval: ApprovalRequest, request: RunRequest, runId: string): Problem {
  if (approval.runId !== runId) return 'approval.runId is not the stream run';
  if (approval.idlePolicy !== request.approvals?.idlePolicy) return 'approval.idlePolicy is not the requested policy';
  return undefined;
}

export function checkApprovalResolution(resolution: ApprovalResolution, requested: ReadonlyMap<string, string>, runId: string): Problem {
  if (resolution.runId !== runId) return 'resolution.runId is not the stream run';
  const callId = requested.get(resolution.approvalId);
  if (callId === undefined) return `resolution ${resolution.approvalId} answers no requested approval`;
  return callId === resolution.callId ? undefined : 'resolution.callId is not the call of its approval';
}

/** Execution bookkeeping of one run: ids seen so far. */
export interface ExecutionLedger {
  executionIds: Set<string>;
  callIds: Set<string>;
}

export function checkToolExecution(execution: ToolExecution, request: RunRequest, runId: string, ledger: ExecutionLedger): Problem {
  if (execution.runId !== runId) return 'execution.runId is not the stream run';
  const name = execution.call.name;
  if (!request.applicationTools?.some((tool) => tool.name === name)) return `execution names ${name}, which the request did not declare`;
  if (!request.tools?.includes(name)) return `execution names ${name}, which the request did not select`;
  if (ledger.executionIds.has(execution.executionId)) return `execution ${execution.executionId} was requested twice`;
  if (ledger.callIds.has(execution.call.id)) return `call ${execution.call.id} was dispatched twice`;
  if (ledger.executionIds.size >= MAX_EXECUTIONS_PER_RUN) return `a run may request at most ${MAX_EXECUTIONS_PER_RUN} executions`;
  ledger.executionIds.add(execution.executionId);
  ledger.callIds.add(execution.call.id);
  return undefined;
}

// ---------------------------------------------------------------------------
// Receipts of decisions and tool executions

const OUTCOME_OF_DECISION: Record<ApprovalDecision['decision'], ApprovalResolution['outcome']> = {
  approve: 'approved',
  deny: 'denied',
  cancel: 'cancelled',
};

/** A decision receipt names the decided approval, run and call, with the outcome the decision asked for. */
export function checkApprovalReceipt(receipt: ApprovalResolution, decision: ApprovalDecision): Problem {
  if (receipt.approvalId !== decision.approvalId) return 'the receipt answers another approval';
  if (receipt.runId !== decision.runId) return 'the receipt names another run';
  if (receipt.callId !== decision.call.id) return 'the receipt names another call';
  const expected = OUTCOME_OF_DECISION[decision.decision];
  return receipt.outcome === expected ? undefined : `the receipt says ${receipt.outcome}, not ${expected}`;
}

/** A tool-execution receipt echoes the ticket identity with the status of the call made. */
export function checkToolReceipt(receipt: ToolExecutionReceipt, identity: ToolExecutionIdentity, status: ToolExecutionReceipt['status']): Problem {
  if (receipt.executionId !== identity.executionId) return 'the receipt names another execution';
  if (receipt.runId !== identity.runId) return 'the receipt names another run';
  if (receipt.callId !== identity.callId) return 'the receipt names another call';
  return receipt.status === status ? undefined : `the receipt status is ${receipt.status}, not ${status}`;
}

// ---------------------------------------------------------------------------
// Conversation sessions

const sameHistory = (a: readonly { role: string; content: string }[], b: readonly { role: string; content: string }[]): boolean =>
  a.length === b.length && a.every((message, index) => message.role === b[index]!.role && message.content === b[index]!.content);

/** A session snapshot names the session asked for (ids compare case-insensitively) and keeps its timestamp rules. */
export function checkSessionSnapshot(snapshot: SessionSnapshot, id?: string): Problem {
  if (id !== undefined && snapshot.session.id.toLowerCase() !== id.toLowerCase()) return 'the snapshot names another session';
  return checkSessionInfo(snapshot.session as unknown as Json);
}

/** A create receipt echoes what was asked: provider, model, mode, history and instructions, at revision 0, ready. */
export function checkSessionCreated(snapshot: SessionSnapshot, request: SessionCreate): Problem {
  const session = snapshot.session;
  if (session.provider !== request.provider || session.model !== request.model) {
    return `the session names ${session.provider}/${session.model}, not the requested ${request.provider}/${request.model}`;
  }
  if (session.mode !== request.mode) return `the session mode is ${session.mode}, not ${request.mode}`;
  if (session.revision !== 0) return `a new session has revision ${session.revision}, not 0`;
  if (session.state !== 'ready') return `a new session is ${session.state}, not ready`;
  if (snapshot.instructions !== request.instructions) return 'the session instructions are not the requested ones';
  if (!sameHistory(snapshot.history, request.history ?? [])) return 'the session history is not the requested one';
  return checkSessionSnapshot(snapshot);
}

/** Lists: at most `limit` (default 20), each listed once, most recently updated first. */
function checkListing(items: readonly { id: string; updatedAt: string }[], limit: number | undefined, what: string): Problem {
  if (items.length > (limit ?? DEFAULT_LIST_LIMIT)) return `the ${what} list holds ${items.length}, more than the ${limit ?? DEFAULT_LIST_LIMIT} asked for`;
  if (duplicates(items.map((item) => item.id))) return `the ${what} list names one twice`;
  const times = items.map((item) => Date.parse(item.updatedAt));
  return times.some((time, index) => index > 0 && time > times[index - 1]!) ? `the ${what} list is not most recently updated first` : undefined;
}

/** A session list: the listing rules, and each session's own. */
export function checkSessionList(list: SessionList, request: SessionListRequest): Problem {
  return first(checkListing(list.sessions, request.limit, 'session'), firstOf(list.sessions, (session) => checkSessionInfo(session as unknown as Json)));
}

export function checkSessionDeleted(result: SessionDeleteResult, id: string): Problem {
  if (result.id.toLowerCase() !== id.toLowerCase()) return 'the receipt names another session';
  return result.deleted === true ? undefined : 'the receipt does not say the session was deleted';
}

// ---------------------------------------------------------------------------
// Durable jobs

export const TERMINAL_JOB_STATES: ReadonlySet<JobInfo['state']> = new Set(['completed', 'failed', 'cancelled', 'interrupted']);
/** Most events one page may hold, and the page size when the request names none. */
export const MAX_JOB_PAGE_EVENTS = 100;

/** JobInfo invariants: expiry exactly when finished and later than the last update, time order, cursors of queued and finished jobs. */
export function checkJobInfo(job: JobInfo): Problem {
  const terminal = TERMINAL_JOB_STATES.has(job.state);
  const created = Date.parse(job.createdAt);
  const updated = Date.parse(job.updatedAt);
  if (updated < created) return 'job.updatedAt is before createdAt';
  if (terminal !== (job.expiresAt !== undefined)) return terminal ? `a ${job.state} job must carry expiresAt` : `a ${job.state} job has no expiresAt`;
  if (job.expiresAt !== undefined && !(Date.parse(job.expiresAt) > updated)) return 'job.expiresAt must be later than updatedAt';
  if (job.state === 'queued' && job.cursor !== 0) return 'a queued job has committed no events (cursor 0)';
  if (terminal && job.cursor < 2) return `a ${job.state} job has at least run.started and its terminal event (cursor >= 2)`;
  return undefined;
}

/** submit: the job runs the requested provider and model. read/cancel: the job is the one named. */
export function checkJobReceipt(job: JobInfo, expected: { id: string } | { request: RunRequest }): Problem {
  if ('id' in expected) {
    if (job.id !== expected.id) return 'the answer names another job';
  } else if (job.provider !== expected.request.provider || job.model !== expected.request.model) {
    return `the job runs ${job.provider}/${job.model}, not the requested ${expected.request.provider}/${expected.request.model}`;
  }
  return checkJobInfo(job);
}

/** A job list: the listing rules, the asked-for state, and each job's own rules. */
export function checkJobList(list: JobList, request: JobListRequest): Problem {
  return first(
    checkListing(list.jobs, request.limit, 'job'),
    firstOf(list.jobs, (job) => (request.state !== undefined && job.state !== request.state ? `the job list holds a ${job.state} job, not only ${request.state} ones` : checkJobInfo(job))),
  );
}

const JOB_TERMINAL_STATE: Record<string, readonly JobInfo['state'][]> = {
  'run.completed': ['completed'],
  'run.cancelled': ['cancelled'],
  'run.failed': ['failed', 'interrupted'],
};

/**
 * One event of a job's log, wherever it is read (a page or the live stream): the job's run,
 * the expected sequence, run.started exactly first (naming the job's provider and model),
 * no interactive events (jobs never negotiate them), and a result that is the job's.
 */
export function checkJobEvent(event: RunEvent, job: JobInfo, expectedSequence: number): Problem {
  const where = `event ${event.sequence} (${event.type})`;
  if (event.type === 'tool.execution.requested' || event.type.startsWith('approval.')) return `${where}: a job never dispatches application tools or asks for approvals`;
  if (event.runId !== job.runId) return `${where} belongs to another run`;
  if (event.sequence !== expectedSequence) return `${where} is out of order: expected sequence ${expectedSequence}`;
  if ((event.sequence === 1) !== (event.type === 'run.started')) return `${where}: run.started comes exactly at sequence 1`;
  if (event.type === 'run.started' && (event.provider !== job.provider || event.model !== job.model)) {
    return `run.started names ${event.provider}/${event.model}, not the job's ${job.provider}/${job.model}`;
  }
  if (event.type === 'run.completed') {
    const result = event.result;
    if (result.runId !== job.runId) return 'the result names another run';
    if (result.provider !== job.provider || result.model !== job.model) return `the result names ${result.provider}/${result.model}, not the job's ${job.provider}/${job.model}`;
    if (result.session !== undefined) return 'a job result carries no session';
  }
  return undefined;
}

/**
 * An event of a page, against the job record the page carries: within the committed
 * cursor, and a terminal event exactly at the cursor of a finished job, agreeing with its
 * state (an interrupted job ends in run.failed whose outcome is uncertain).
 */
function checkJobPageEvent(event: RunEvent, job: JobInfo, expectedSequence: number): Problem {
  const problem = checkJobEvent(event, job, expectedSequence);
  if (problem) return problem;
  const where = `event ${event.sequence} (${event.type})`;
  if (event.sequence > job.cursor) return `${where} is beyond the job's cursor ${job.cursor}`;
  const terminal = TERMINAL_EVENT_TYPES.has(event.type);
  const finished = TERMINAL_JOB_STATES.has(job.state);
  const atCursor = event.sequence === job.cursor;
  if (terminal && (!atCursor || !finished)) return `${where}: a terminal event comes only last in a finished job's log`;
  if (atCursor && finished && !terminal) return `${where}: the last event of a ${job.state} job must be terminal`;
  if (!terminal) return undefined;
  if (!JOB_TERMINAL_STATE[event.type]!.includes(job.state)) return `${where} does not match the job state ${job.state}`;
  if (event.type === 'run.failed' && job.state === 'interrupted' && event.error.outcome !== 'uncertain') {
    return 'an interrupted job ends with run.failed whose outcome is uncertain';
  }
  return undefined;
}

/** A page of a job's log: the job asked for, within the limit, contiguous from `after`, and cursors that agree. */
export function checkJobEventPage(page: JobEventPage, request: JobEventsRequest): Problem {
  const job = page.job;
  if (job.id !== request.id) return 'the page describes another job';
  const jobProblem = checkJobInfo(job);
  if (jobProblem) return jobProblem;
  const limit = request.limit ?? MAX_JOB_PAGE_EVENTS;
  if (page.events.length > limit) return `the page holds ${page.events.length} events, more than the limit ${limit}`;
  if (request.after > job.cursor) return `the page starts after ${request.after}, beyond the job's cursor ${job.cursor}`;
  const problem = firstOf(page.events, (event, index) => checkJobPageEvent(event, job, request.after + 1 + index));
  if (problem) return problem;
  const last = page.events.length > 0 ? page.events[page.events.length - 1]!.sequence : request.after;
  if (page.nextCursor !== last) return `nextCursor is ${page.nextCursor}, not the last sequence ${last}`;
  if (page.hasMore !== last < job.cursor) return `hasMore is ${page.hasMore} with ${last} of ${job.cursor} events read`;
  if (page.hasMore && page.events.length === 0) return 'an empty page cannot have more';
  return undefined;
}
