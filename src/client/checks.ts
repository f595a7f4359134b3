/**
 * Client-side cross-field rules: what JSON Schema alone cannot say about a host's answer
 * (result vs request, context manifests, retrieval links, ingestion coverage, sessions,
 * approvals, application-tool executions). Each check returns a problem description, or
 * undefined when the value is consistent; callers turn problems into typed errors.
 */
import type {
  ApprovalDecision,
  ApprovalRequest,
  ApprovalResolution,
  RunRequest,
  RunResult,
  ToolExecution,
  ToolExecutionIdentity,
  ToolExecutionReceipt,
} from '../protocol/schemas.js';

type Problem = string | undefined;
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
