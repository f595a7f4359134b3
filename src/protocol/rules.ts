/**
 * The cross-field rules of wire protocol 1.0: what JSON Schema cannot say about a value
 * (an answer against the request that asked for it, a stream event against the run, the
 * parts of one value against each other). They are data, not code: `src/protocol/rule-evaluator.ts`
 * evaluates them for the runtime and the TypeScript client, and `npm run protocol` publishes
 * them as `protocol/rules.json` and copies them into each client's generated folder, where a
 * small evaluator per language (Go `rules.go`, Python `_rules.py`, Rust `validate/rules.rs`)
 * runs the same tables. Every rule has an id; a client that refuses a value names the rule.
 *
 * The vocabulary is as small as the rules need (see docs/architecture.md, "Cross-field rules"):
 *
 * A **rule set** has parameters (the names its rules see) and rules, evaluated in order; the
 * first broken rule is the answer. A **rule** is one of
 * - a check `{ id, check, message, when? }`: broken when `when` holds (or is absent) and
 *   `check` does not;
 * - a block `{ when?, each?, let?, rules }`: its rules, for every item of a list (`each`)
 *   and with extra names bound (`let`);
 * - an application `{ when?, apply, with }`: another rule set, its parameters bound by `with`.
 *
 * A **condition** is `equal`, `less`, `atMost` (numbers, or strings by code point; false when
 * either side is absent or they are of different kinds), `present`, `in` (a member of a list),
 * `unique` (no two items of a list equal), `iff`, `not`, `and`, or `uriWithoutCredentials`
 * (no `@` in a URI's authority).
 *
 * A **value** is a path (`answer.hits[].chunkId`: names and fields; `[]` maps the rest of the
 * path over a list's items), a number, boolean or null, `{ value }` (any JSON literal), or
 * `{ count }` (items of a list, optionally those `where` a condition holds of `it`),
 * `{ bytes }` (UTF-8 length of a string, or of all strings of a list), `{ add }`,
 * `{ default }` (the first present value), `{ lower }` (ASCII lowercase), `{ find, where }`
 * (the first item of a list for which the condition holds of `it`) and `{ map, to }`
 * (a value looked up in a literal table). An absent field is absent, never null; a list
 * operation reads an absent list as empty.
 *
 * Equality is JSON equality: numbers by value, no number equals a boolean, objects by their
 * keys and values.
 */

export type Path = string;

export type Value =
  | Path
  | number
  | boolean
  | null
  | { value: unknown }
  | { count: Value; where?: Condition }
  | { bytes: Value }
  | { add: Value[] }
  | { default: Value[] }
  | { lower: Value }
  | { find: Value; where: Condition }
  | { map: Value; to: Record<string, unknown> };

export type Condition =
  | { equal: [Value, Value] }
  | { less: [Value, Value] }
  | { atMost: [Value, Value] }
  | { present: Value }
  | { in: [Value, Value] }
  | { unique: Value }
  | { iff: [Condition, Condition] }
  | { not: Condition }
  | { and: Condition[] }
  | { uriWithoutCredentials: Value };

export interface CheckRule {
  /** Stable name of the rule, reported by every client that refuses a value for it. */
  id: string;
  when?: Condition;
  check: Condition;
  /** What is wrong when the check fails. */
  message: string;
}

export interface BlockRule {
  when?: Condition;
  /** Evaluates the rules once per item of `in`, the item bound to `as` (its position to `index`). */
  each?: { in: Value; as: string; index?: string };
  /** Names bound for the rules, each evaluated in the scope before them (after `each`'s, so they may refer to the item). */
  let?: Record<string, Value>;
  rules: Rule[];
}

export interface ApplyRule {
  when?: Condition;
  /** The rule set to evaluate, seeing only the names bound by `with`. */
  apply: string;
  with: Record<string, Value>;
}

export type Rule = CheckRule | BlockRule | ApplyRule;

export interface RuleSet {
  /** The names the rules see; a parameter left out of `with` is absent. */
  params: string[];
  rules: Rule[];
}

const text = (value: string) => ({ value });
const TERMINAL_EVENTS = { value: ['run.completed', 'run.failed', 'run.cancelled'] };
const FINISHED_JOB_STATES = { value: ['completed', 'failed', 'cancelled', 'interrupted'] };
const FAILED_RUN_STATES = { value: ['failed', 'cancelled', 'interrupted'] };
const INTERACTIVE_EVENTS = { value: ['approval.requested', 'approval.resolved', 'tool.execution.requested'] };
/** Retrieval defaults a host applies when the request leaves them out. */
export const DEFAULT_RETRIEVAL_LIMIT = 8;
export const DEFAULT_RETRIEVAL_MAX_CONTEXT_BYTES = 65_536;
/** Most application-tool executions one run may request. */
export const MAX_EXECUTIONS_PER_RUN = 2048;
/** Most events one job page may hold, and the page size when the request names none. */
export const MAX_JOB_PAGE_EVENTS = 100;
/** How many a list (of sessions, of jobs) holds when the request names no limit. */
export const DEFAULT_LIST_LIMIT = 20;

const sameProviderAndModel = (a: string, b: string): Condition => ({
  and: [{ equal: [`${a}.provider`, `${b}.provider`] }, { equal: [`${a}.model`, `${b}.model`] }],
});

export const RULE_SETS: Record<string, RuleSet> = {
  // -------------------------------------------------------------------------
  // Parts shared by several answers (and by the host's own checks)

  /** A source location's ranges (the effective location: a chunk's fields over its source's). */
  sourceLocation: {
    params: ['page', 'pageEnd', 'startLine', 'endLine'],
    rules: [
      { id: 'location.pageRange', when: { present: 'pageEnd' }, check: { atMost: ['page', 'pageEnd'] }, message: 'pageEnd needs a page at or before it' },
      { id: 'location.lineRange', when: { present: 'endLine' }, check: { atMost: ['startLine', 'endLine'] }, message: 'endLine needs a startLine at or before it' },
    ],
  },

  contextSource: {
    params: ['source'],
    rules: [
      {
        apply: 'sourceLocation',
        with: { page: 'source.location.page', pageEnd: 'source.location.pageEnd', startLine: 'source.location.startLine', endLine: 'source.location.endLine' },
      },
      { id: 'source.uriCredentials', when: { present: 'source.uri' }, check: { uriWithoutCredentials: 'source.uri' }, message: 'the source uri carries credentials' },
    ],
  },

  /** Ingestion coverage: pages exactly for a PDF, messages exactly for an email, counts that add up, OCR named exactly when used. */
  ingestionManifest: {
    params: ['manifest'],
    rules: [
      { id: 'ingestion.indexedText', check: { atMost: [1, 'manifest.indexedTextBytes'] }, message: 'the manifest indexed no text' },
      {
        id: 'ingestion.indexedWithinExtracted',
        check: { atMost: ['manifest.indexedTextBytes', 'manifest.extractedTextBytes'] },
        message: 'the manifest indexed more text than it extracted',
      },
      {
        id: 'ingestion.pagesForPdf',
        check: { iff: [{ present: 'manifest.pages' }, { equal: ['manifest.format', text('pdf')] }] },
        message: 'page coverage is reported exactly for a PDF',
      },
      {
        id: 'ingestion.messagesForEmail',
        check: { iff: [{ present: 'manifest.messages' }, { equal: ['manifest.format', text('email')] }] },
        message: 'message coverage is reported exactly for an email',
      },
      {
        id: 'ingestion.ocrExtractor',
        check: { iff: [{ present: 'manifest.ocrExtractor' }, { less: [0, { count: 'manifest.pages.ocr' }] }] },
        message: 'an OCR extractor is named exactly when some pages were OCRed',
      },
      {
        when: { present: 'manifest.pages' },
        let: { pages: 'manifest.pages' },
        rules: [
          { id: 'ingestion.pages.unique', check: { and: [{ unique: 'pages.ocr' }, { unique: 'pages.empty' }] }, message: 'a page is listed twice' },
          {
            each: { in: 'pages.ocr', as: 'page' },
            rules: [
              { id: 'ingestion.pages.ocrWithinTotal', check: { atMost: ['page', 'pages.total'] }, message: 'an OCR page is beyond the total' },
              { id: 'ingestion.pages.ocrNotEmpty', check: { not: { in: ['page', 'pages.empty'] } }, message: 'a page is listed as both OCR and empty' },
            ],
          },
          {
            each: { in: 'pages.empty', as: 'page' },
            rules: [{ id: 'ingestion.pages.emptyWithinTotal', check: { atMost: ['page', 'pages.total'] }, message: 'an empty page is beyond the total' }],
          },
          { id: 'ingestion.pages.someText', check: { less: [{ count: 'pages.empty' }, 'pages.total'] }, message: 'no page has text' },
          {
            id: 'ingestion.pages.chunks',
            check: { atMost: ['pages.total', { add: ['manifest.chunks', { count: 'pages.empty' }] }] },
            message: 'there are fewer chunks than pages with text',
          },
        ],
      },
      {
        when: { present: 'manifest.messages' },
        rules: [
          { id: 'ingestion.messages.someText', check: { less: ['manifest.messages.empty', 'manifest.messages.total'] }, message: 'no message has text' },
          {
            id: 'ingestion.messages.chunks',
            check: { atMost: ['manifest.messages.total', { add: ['manifest.chunks', 'manifest.messages.empty'] }] },
            message: 'there are fewer chunks than messages with text',
          },
        ],
      },
    ],
  },

  /** Host timestamps are fixed-width UTC, so they order as strings. */
  sessionInfo: {
    params: ['session'],
    rules: [
      { id: 'session.timeOrder', check: { atMost: ['session.createdAt', 'session.updatedAt'] }, message: 'updatedAt is before createdAt' },
      {
        id: 'session.expiry',
        check: { iff: [{ present: 'session.expiresAt' }, { not: { equal: ['session.state', text('running')] } }] },
        message: 'a session carries expiresAt exactly when it is not running',
      },
      {
        id: 'session.expiresAfterUpdate',
        when: { present: 'session.expiresAt' },
        check: { less: ['session.updatedAt', 'session.expiresAt'] },
        message: 'expiresAt must be later than updatedAt',
      },
    ],
  },

  jobInfo: {
    params: ['job'],
    rules: [
      { id: 'job.timeOrder', check: { atMost: ['job.createdAt', 'job.updatedAt'] }, message: 'updatedAt is before createdAt' },
      {
        id: 'job.expiry',
        check: { iff: [{ present: 'job.expiresAt' }, { in: ['job.state', FINISHED_JOB_STATES] }] },
        message: 'a job carries expiresAt exactly when it is finished',
      },
      { id: 'job.expiresAfterUpdate', when: { present: 'job.expiresAt' }, check: { less: ['job.updatedAt', 'job.expiresAt'] }, message: 'expiresAt must be later than updatedAt' },
      { id: 'job.queuedCursor', when: { equal: ['job.state', text('queued')] }, check: { equal: ['job.cursor', 0] }, message: 'a queued job has committed no events (cursor 0)' },
      {
        id: 'job.finishedCursor',
        when: { in: ['job.state', FINISHED_JOB_STATES] },
        check: { atMost: [2, 'job.cursor'] },
        message: 'a finished job has at least run.started and its terminal event (cursor 2 or more)',
      },
    ],
  },

  /** A result's context manifests and draft artifacts (what a result says about itself). */
  resultSources: {
    params: ['result'],
    rules: [
      { id: 'result.sourcesUnique', check: { unique: 'result.sources[].id' }, message: 'result.sources lists a source twice' },
      { each: { in: 'result.sources', as: 'source' }, rules: [{ apply: 'contextSource', with: { source: 'source' } }] },
      {
        each: { in: 'result.artifacts', as: 'artifact' },
        rules: [
          { id: 'result.artifactName', check: { not: { in: ['artifact.name', { value: ['.', '..'] }] } }, message: 'an artifact name must name a file' },
          {
            each: { in: 'artifact.sourceIds', as: 'cited' },
            rules: [{ id: 'result.artifactCitation', check: { in: ['cited', 'result.sources[].id'] }, message: 'an artifact cites a source not in result.sources' }],
          },
        ],
      },
    ],
  },

  /** Retrieval evidence within the asked scope and budget (`scope`: a run's retrieval options or a search request). */
  retrievalHits: {
    params: ['answer', 'scope'],
    rules: [
      { id: 'retrieval.corpus', check: { equal: ['answer.corpus', 'scope.corpus'] }, message: 'the hits come from another corpus than the one requested' },
      {
        id: 'retrieval.limit',
        check: { atMost: [{ count: 'answer.hits' }, { default: ['scope.limit', DEFAULT_RETRIEVAL_LIMIT] }] },
        message: `there are more hits than the limit (default ${DEFAULT_RETRIEVAL_LIMIT})`,
      },
      { id: 'retrieval.uniqueChunks', check: { unique: 'answer.hits[].chunkId' }, message: 'a chunk is listed twice' },
      {
        id: 'retrieval.maxContextBytes',
        check: { atMost: [{ bytes: 'answer.hits[].text' }, { default: ['scope.maxContextBytes', DEFAULT_RETRIEVAL_MAX_CONTEXT_BYTES] }] },
        message: `the hits carry more text than maxContextBytes (default ${DEFAULT_RETRIEVAL_MAX_CONTEXT_BYTES} UTF-8 bytes)`,
      },
      {
        each: { in: 'answer.hits', as: 'hit' },
        rules: [
          {
            id: 'retrieval.hitSelected',
            when: { present: 'scope.sourceIds' },
            check: { in: ['hit.source.id', 'scope.sourceIds'] },
            message: 'a hit comes from a source the request did not select',
          },
          { id: 'retrieval.hitMinScore', when: { present: 'scope.minScore' }, check: { atMost: ['scope.minScore', 'hit.score'] }, message: 'a hit scores below minScore' },
          { apply: 'contextSource', with: { source: 'hit.source' } },
          { when: { present: 'hit.ingestion' }, apply: 'ingestionManifest', with: { manifest: 'hit.ingestion' } },
        ],
      },
    ],
  },

  /** A run result against its request; `runId` is the stream's run (absent for a JSON result). */
  runResult: {
    params: ['answer', 'request', 'runId'],
    rules: [
      { id: 'result.runId', when: { present: 'runId' }, check: { equal: ['answer.runId', 'runId'] }, message: "result.runId is not the stream's run" },
      { id: 'result.providerModel', check: sameProviderAndModel('answer', 'request'), message: 'the result names another provider or model than the request' },
      {
        id: 'result.sessionBound',
        check: { iff: [{ present: 'answer.session' }, { present: 'request.session' }] },
        message: 'result.session is present exactly when the request bound a session',
      },
      {
        when: { present: 'request.session' },
        rules: [
          {
            id: 'result.session.id',
            check: { equal: [{ lower: 'answer.session.id' }, { lower: 'request.session.id' }] },
            message: 'result.session is not the requested session',
          },
          {
            id: 'result.session.revision',
            check: { equal: ['answer.session.revision', { add: ['request.session.revision', 1] }] },
            message: 'result.session.revision must be the requested revision plus one',
          },
          { id: 'result.session.providerModel', check: sameProviderAndModel('answer.session', 'request'), message: 'result.session changed provider or model' },
          { id: 'result.session.ready', check: { equal: ['answer.session.state', text('ready')] }, message: 'result.session must be ready after a completed run' },
          { apply: 'sessionInfo', with: { session: 'answer.session' } },
        ],
      },
      { apply: 'resultSources', with: { result: 'answer' } },
      {
        id: 'result.retrievalAsked',
        check: { iff: [{ present: 'answer.retrieval' }, { present: 'request.retrieval' }] },
        message: 'result.retrieval is present exactly when the request asked for retrieval',
      },
      {
        id: 'result.retrievalUnasked',
        when: { not: { present: 'request.retrieval' } },
        check: { equal: [{ count: 'answer.sources', where: { equal: ['it.origin', text('retrieval')] } }, 0] },
        message: 'result.sources cites retrieval the request did not ask for',
      },
      {
        when: { present: 'request.retrieval' },
        rules: [
          { apply: 'retrievalHits', with: { answer: 'answer.retrieval', scope: 'request.retrieval' } },
          {
            id: 'result.retrievalManifests',
            check: { equal: [{ count: 'answer.sources', where: { equal: ['it.origin', text('retrieval')] } }, { count: 'answer.retrieval.hits' }] },
            message: 'result.sources must hold exactly one retrieval manifest per hit',
          },
          {
            each: { in: 'answer.retrieval.hits', as: 'hit' },
            let: { manifest: { find: 'answer.sources', where: { and: [{ equal: ['it.id', 'hit.chunkId'] }, { equal: ['it.origin', text('retrieval')] }] } } },
            rules: [
              { id: 'result.hitManifest', check: { present: 'manifest' }, message: 'a hit has no retrieval manifest in result.sources' },
              { id: 'result.hitManifestRevision', check: { equal: ['manifest.revision', 'hit.source.revision'] }, message: 'a hit and its manifest disagree on the revision' },
              {
                id: 'result.hitManifestDocument',
                check: { equal: ['manifest.location.documentId', 'hit.source.id'] },
                message: 'a hit and its manifest disagree on location.documentId',
              },
              { id: 'result.hitManifestBytes', check: { equal: ['manifest.bytes', { bytes: 'hit.text' }] }, message: 'a hit and its manifest disagree on the byte count' },
            ],
          },
        ],
      },
    ],
  },

  /** An index, delete or ingest receipt names what was asked; an ingestion manifest counts the receipt's chunks. */
  sourceReceipt: {
    params: ['answer', 'corpus', 'sourceId', 'revision'],
    rules: [
      { id: 'receipt.corpus', check: { equal: ['answer.corpus', 'corpus'] }, message: 'the receipt names another corpus' },
      { id: 'receipt.source', check: { equal: ['answer.sourceId', 'sourceId'] }, message: 'the receipt names another source' },
      { id: 'receipt.revision', check: { equal: ['answer.revision', 'revision'] }, message: 'the receipt names another revision' },
      {
        when: { present: 'answer.ingestion' },
        rules: [
          { id: 'receipt.ingestionChunks', check: { equal: ['answer.ingestion.chunks', 'answer.chunks'] }, message: "the ingestion manifest counts another number of chunks than the receipt" },
          { apply: 'ingestionManifest', with: { manifest: 'answer.ingestion' } },
        ],
      },
    ],
  },

  toolReceipt: {
    params: ['answer', 'request', 'status'],
    rules: [
      { id: 'toolReceipt.execution', check: { equal: ['answer.executionId', 'request.executionId'] }, message: 'the receipt names another execution' },
      { id: 'toolReceipt.run', check: { equal: ['answer.runId', 'request.runId'] }, message: 'the receipt names another run' },
      { id: 'toolReceipt.call', check: { equal: ['answer.callId', 'request.callId'] }, message: 'the receipt names another call' },
      { id: 'toolReceipt.status', check: { equal: ['answer.status', 'status'] }, message: 'the receipt status is not the one of the call made' },
    ],
  },

  // -------------------------------------------------------------------------
  // Operation answers (parameters `answer`, `request`; OPERATION_RULES names which)

  retrievalSearch: {
    params: ['answer', 'request'],
    rules: [{ apply: 'retrievalHits', with: { answer: 'answer', scope: 'request' } }],
  },

  indexReceipt: {
    params: ['answer', 'request'],
    rules: [{ apply: 'sourceReceipt', with: { answer: 'answer', corpus: 'request.corpus', sourceId: 'request.source.id', revision: 'request.source.revision' } }],
  },

  deleteReceipt: {
    params: ['answer', 'request'],
    rules: [{ apply: 'sourceReceipt', with: { answer: 'answer', corpus: 'request.corpus', sourceId: 'request.sourceId', revision: 'request.revision' } }],
  },

  ingestReceipt: {
    params: ['answer', 'request'],
    rules: [
      {
        apply: 'sourceReceipt',
        with: { answer: 'answer', corpus: 'request.corpus', sourceId: 'request.document.source.id', revision: 'request.document.source.revision' },
      },
    ],
  },

  approvalReceipt: {
    params: ['answer', 'request'],
    rules: [
      { id: 'approvalReceipt.approval', check: { equal: ['answer.approvalId', 'request.approvalId'] }, message: 'the receipt answers another approval' },
      { id: 'approvalReceipt.run', check: { equal: ['answer.runId', 'request.runId'] }, message: 'the receipt names another run' },
      { id: 'approvalReceipt.call', check: { equal: ['answer.callId', 'request.call.id'] }, message: 'the receipt names another call' },
      {
        id: 'approvalReceipt.outcome',
        check: { equal: ['answer.outcome', { map: 'request.decision', to: { approve: 'approved', deny: 'denied', cancel: 'cancelled' } }] },
        message: 'the receipt outcome is not the one the decision asked for',
      },
    ],
  },

  toolProgressReceipt: {
    params: ['answer', 'request'],
    rules: [{ apply: 'toolReceipt', with: { answer: 'answer', request: 'request', status: text('progress') } }],
  },

  toolResultReceipt: {
    params: ['answer', 'request'],
    rules: [{ apply: 'toolReceipt', with: { answer: 'answer', request: 'request', status: text('accepted') } }],
  },

  /**
   * A list (of sessions, of jobs): within the limit asked for, each item once, most recently
   * updated first. The order compares every item with each one before it: a list holds at
   * most 100 (its schema), so that is at most 4,950 comparisons of two timestamps.
   */
  listing: {
    params: ['items', 'limit'],
    rules: [
      {
        id: 'list.limit',
        check: { atMost: [{ count: 'items' }, { default: ['limit', DEFAULT_LIST_LIMIT] }] },
        message: `the list holds more than the limit asked for (default ${DEFAULT_LIST_LIMIT})`,
      },
      { id: 'list.unique', check: { unique: 'items[].id' }, message: 'the list names one item twice' },
      {
        each: { in: 'items', as: 'item', index: 'position' },
        rules: [
          {
            each: { in: 'items', as: 'before', index: 'beforePosition' },
            rules: [
              {
                id: 'list.newestFirst',
                when: { less: ['beforePosition', 'position'] },
                check: { atMost: ['item.updatedAt', 'before.updatedAt'] },
                message: 'an item comes after one updated before it (most recently updated first)',
              },
            ],
          },
        ],
      },
    ],
  },

  sessionList: {
    params: ['answer', 'request'],
    rules: [
      { apply: 'listing', with: { items: 'answer.sessions', limit: 'request.limit' } },
      { each: { in: 'answer.sessions', as: 'session' }, rules: [{ apply: 'sessionInfo', with: { session: 'session' } }] },
    ],
  },

  /** The listing rules, only jobs in the state asked for, and each job's own rules. */
  jobList: {
    params: ['answer', 'request'],
    rules: [
      { apply: 'listing', with: { items: 'answer.jobs', limit: 'request.limit' } },
      {
        each: { in: 'answer.jobs', as: 'job' },
        rules: [
          { id: 'jobList.state', when: { present: 'request.state' }, check: { equal: ['job.state', 'request.state'] }, message: 'the list holds a job in another state than the one asked for' },
          { apply: 'jobInfo', with: { job: 'job' } },
        ],
      },
    ],
  },

  sessionCreated: {
    params: ['answer', 'request'],
    rules: [
      { id: 'sessionCreated.providerModel', check: sameProviderAndModel('answer.session', 'request'), message: 'the session names another provider or model than the request' },
      { id: 'sessionCreated.mode', check: { equal: ['answer.session.mode', 'request.mode'] }, message: 'the session mode is not the requested one' },
      { id: 'sessionCreated.revision', check: { equal: ['answer.session.revision', 0] }, message: 'a new session has revision 0' },
      { id: 'sessionCreated.ready', check: { equal: ['answer.session.state', text('ready')] }, message: 'a new session is ready' },
      { id: 'sessionCreated.instructions', check: { equal: ['answer.instructions', 'request.instructions'] }, message: 'the session instructions are not the requested ones' },
      {
        id: 'sessionCreated.history',
        check: { equal: ['answer.history', { default: ['request.history', { value: [] }] }] },
        message: 'the session history is not the requested one',
      },
      { apply: 'sessionInfo', with: { session: 'answer.session' } },
    ],
  },

  /** Session ids compare case-insensitively (a request may spell a UUID in capitals). */
  sessionRead: {
    params: ['answer', 'request'],
    rules: [
      { id: 'sessionRead.id', check: { equal: [{ lower: 'answer.session.id' }, { lower: 'request.id' }] }, message: 'the snapshot names another session' },
      { apply: 'sessionInfo', with: { session: 'answer.session' } },
    ],
  },

  sessionDeleted: {
    params: ['answer', 'request'],
    rules: [
      { id: 'sessionDeleted.id', check: { equal: [{ lower: 'answer.id' }, { lower: 'request.id' }] }, message: 'the receipt names another session' },
      { id: 'sessionDeleted.deleted', check: { equal: ['answer.deleted', true] }, message: 'the receipt does not say the session was deleted' },
    ],
  },

  jobSubmitted: {
    params: ['answer', 'request'],
    rules: [
      { id: 'jobSubmitted.providerModel', check: sameProviderAndModel('answer', 'request.request'), message: 'the job runs another provider or model than the request' },
      { apply: 'jobInfo', with: { job: 'answer' } },
    ],
  },

  /** read and cancel: the job named. */
  jobNamed: {
    params: ['answer', 'request'],
    rules: [
      { id: 'jobNamed.id', check: { equal: ['answer.id', 'request.id'] }, message: 'the answer names another job' },
      { apply: 'jobInfo', with: { job: 'answer' } },
    ],
  },

  /** A page of a job's log: the job asked for, within the limit, contiguous after `after`, cursors that agree. */
  jobEventPage: {
    params: ['answer', 'request'],
    rules: [
      { id: 'jobPage.job', check: { equal: ['answer.job.id', 'request.id'] }, message: 'the page describes another job' },
      { apply: 'jobInfo', with: { job: 'answer.job' } },
      {
        id: 'jobPage.limit',
        check: { atMost: [{ count: 'answer.events' }, { default: ['request.limit', MAX_JOB_PAGE_EVENTS] }] },
        message: `the page holds more events than the limit (default ${MAX_JOB_PAGE_EVENTS})`,
      },
      { id: 'jobPage.after', check: { atMost: ['request.after', 'answer.job.cursor'] }, message: "the page starts beyond the job's cursor" },
      {
        each: { in: 'answer.events', as: 'event', index: 'position' },
        rules: [
          { apply: 'jobEvent', with: { event: 'event', job: 'answer.job', sequence: { add: ['request.after', 'position', 1] } } },
          { apply: 'jobLogEnd', with: { event: 'event', job: 'answer.job' } },
        ],
      },
      {
        id: 'jobPage.nextCursor',
        check: { equal: ['answer.nextCursor', { add: ['request.after', { count: 'answer.events' }] }] },
        message: 'nextCursor is not the last sequence of the page',
      },
      {
        id: 'jobPage.hasMore',
        check: { iff: [{ equal: ['answer.hasMore', true] }, { less: ['answer.nextCursor', 'answer.job.cursor'] }] },
        message: "hasMore disagrees with the job's cursor",
      },
      { id: 'jobPage.emptyHasMore', when: { equal: ['answer.hasMore', true] }, check: { less: [0, { count: 'answer.events' }] }, message: 'an empty page cannot have more' },
    ],
  },

  /** A run record read back: its times, its state against what it carries (a result only when completed, an error only when it ended otherwise). */
  runInfo: {
    params: ['run'],
    rules: [
      { id: 'runInfo.timeOrder', check: { atMost: ['run.createdAt', 'run.updatedAt'] }, message: 'updatedAt is before createdAt' },
      { id: 'runInfo.expiry', when: { present: 'run.expiresAt' }, check: { in: ['run.state', FINISHED_JOB_STATES] }, message: 'only a finished run carries expiresAt' },
      { id: 'runInfo.expiresAfterUpdate', when: { present: 'run.expiresAt' }, check: { less: ['run.updatedAt', 'run.expiresAt'] }, message: 'expiresAt must be later than updatedAt' },
      { id: 'runInfo.jobId', check: { iff: [{ present: 'run.jobId' }, { equal: ['run.mode', text('background')] }] }, message: 'a run carries jobId exactly when it is a background run' },
      { id: 'runInfo.queuedCursor', when: { equal: ['run.state', text('queued')] }, check: { equal: ['run.cursor', 0] }, message: 'a queued run has committed no events (cursor 0)' },
      { id: 'runInfo.result', when: { present: 'run.result' }, check: { equal: ['run.state', text('completed')] }, message: 'only a completed run carries a result' },
      { id: 'runInfo.error', when: { present: 'run.error' }, check: { in: ['run.state', FAILED_RUN_STATES] }, message: 'only a failed, cancelled or interrupted run carries an error' },
      {
        when: { present: 'run.result' },
        rules: [
          { id: 'runInfo.resultRun', check: { equal: ['run.result.runId', 'run.runId'] }, message: 'the result names another run' },
          { id: 'runInfo.resultProviderModel', check: sameProviderAndModel('run.result', 'run'), message: "the result names another provider or model than the run's" },
        ],
      },
    ],
  },

  /** readRun: the run named. */
  runNamed: {
    params: ['answer', 'request'],
    rules: [
      { id: 'runNamed.id', check: { equal: ['answer.runId', 'request.runId'] }, message: 'the answer names another run' },
      { apply: 'runInfo', with: { run: 'answer' } },
    ],
  },

  /** A page of a run's events: the run asked for, within the limit, contiguous after `after`, cursors that agree. */
  runEventPage: {
    params: ['answer', 'request'],
    rules: [
      { id: 'runPage.run', check: { equal: ['answer.run.runId', 'request.runId'] }, message: 'the page describes another run' },
      { apply: 'runInfo', with: { run: 'answer.run' } },
      {
        id: 'runPage.limit',
        check: { atMost: [{ count: 'answer.events' }, { default: ['request.limit', MAX_JOB_PAGE_EVENTS] }] },
        message: `the page holds more events than the limit (default ${MAX_JOB_PAGE_EVENTS})`,
      },
      { id: 'runPage.after', check: { atMost: ['request.after', 'answer.run.cursor'] }, message: "the page starts beyond the run's cursor" },
      {
        each: { in: 'answer.events', as: 'event', index: 'position' },
        rules: [
          { apply: 'runLogEvent', with: { event: 'event', run: 'answer.run', sequence: { add: ['request.after', 'position', 1] } } },
          { id: 'runPage.withinCursor', check: { atMost: ['event.sequence', 'answer.run.cursor'] }, message: "the event is beyond the run's cursor" },
          {
            id: 'runPage.terminalLast',
            when: { in: ['event.type', TERMINAL_EVENTS] },
            check: { and: [{ equal: ['event.sequence', 'answer.run.cursor'] }, { in: ['answer.run.state', FINISHED_JOB_STATES] }] },
            message: "a terminal event comes only last in a finished run's events",
          },
        ],
      },
      {
        id: 'runPage.nextCursor',
        check: { equal: ['answer.nextCursor', { add: ['request.after', { count: 'answer.events' }] }] },
        message: 'nextCursor is not the last sequence of the page',
      },
      {
        id: 'runPage.hasMore',
        check: { iff: [{ equal: ['answer.hasMore', true] }, { less: ['answer.nextCursor', 'answer.run.cursor'] }] },
        message: "hasMore disagrees with the run's cursor",
      },
      { id: 'runPage.emptyHasMore', when: { equal: ['answer.hasMore', true] }, check: { less: [0, { count: 'answer.events' }] }, message: 'an empty page cannot have more' },
    ],
  },

  // -------------------------------------------------------------------------
  // Stream events

  /**
   * One event of a job's log, wherever it is read (a page or the live stream): the job's run,
   * the expected sequence, run.started exactly first naming the job's provider and model, no
   * interactive events (jobs never negotiate them), and a result that is the job's.
   */
  jobEvent: {
    params: ['event', 'job', 'sequence'],
    rules: [
      { id: 'jobEvent.interactive', check: { not: { in: ['event.type', INTERACTIVE_EVENTS] } }, message: 'a job never dispatches application tools or asks for approvals' },
      { id: 'jobEvent.run', check: { equal: ['event.runId', 'job.runId'] }, message: 'the event belongs to another run' },
      { id: 'jobEvent.sequence', check: { equal: ['event.sequence', 'sequence'] }, message: 'the event is out of order' },
      {
        id: 'jobEvent.startedFirst',
        check: { iff: [{ equal: ['event.sequence', 1] }, { equal: ['event.type', text('run.started')] }] },
        message: 'run.started comes exactly at sequence 1',
      },
      {
        id: 'jobEvent.startedNames',
        when: { equal: ['event.type', text('run.started')] },
        check: sameProviderAndModel('event', 'job'),
        message: "run.started names another provider or model than the job's",
      },
      {
        when: { equal: ['event.type', text('run.completed')] },
        rules: [
          { id: 'jobResult.run', check: { equal: ['event.result.runId', 'job.runId'] }, message: 'the result names another run' },
          { id: 'jobResult.providerModel', check: sameProviderAndModel('event.result', 'job'), message: "the result names another provider or model than the job's" },
          { id: 'jobResult.session', check: { not: { present: 'event.result.session' } }, message: 'a job result carries no session' },
          { apply: 'resultSources', with: { result: 'event.result' } },
        ],
      },
    ],
  },

  /**
   * One committed event of a run read back (a page or the follow stream): the run's, the expected
   * sequence, run.started exactly first naming the run's provider and model, a result that is the run's.
   */
  runLogEvent: {
    params: ['event', 'run', 'sequence'],
    rules: [
      { id: 'runLog.run', check: { equal: ['event.runId', 'run.runId'] }, message: 'the event belongs to another run' },
      { id: 'runLog.sequence', check: { equal: ['event.sequence', 'sequence'] }, message: 'the event is out of order' },
      {
        id: 'runLog.startedFirst',
        check: { iff: [{ equal: ['event.sequence', 1] }, { equal: ['event.type', text('run.started')] }] },
        message: 'run.started comes exactly at sequence 1',
      },
      {
        id: 'runLog.startedNames',
        when: { equal: ['event.type', text('run.started')] },
        check: sameProviderAndModel('event', 'run'),
        message: "run.started names another provider or model than the run's",
      },
      {
        when: { equal: ['event.type', text('run.completed')] },
        rules: [
          { id: 'runLog.resultRun', check: { equal: ['event.result.runId', 'run.runId'] }, message: 'the result names another run' },
          { id: 'runLog.resultProviderModel', check: sameProviderAndModel('event.result', 'run'), message: "the result names another provider or model than the run's" },
        ],
      },
    ],
  },

  /**
   * An event of a page against the job record the page carries: within the committed cursor,
   * and a terminal event exactly at the cursor of a finished job, agreeing with its state (an
   * interrupted job ends in run.failed whose outcome is uncertain).
   */
  jobLogEnd: {
    params: ['event', 'job'],
    rules: [
      { id: 'jobPage.withinCursor', check: { atMost: ['event.sequence', 'job.cursor'] }, message: "the event is beyond the job's cursor" },
      {
        id: 'jobPage.terminalLast',
        when: { in: ['event.type', TERMINAL_EVENTS] },
        check: { and: [{ equal: ['event.sequence', 'job.cursor'] }, { in: ['job.state', FINISHED_JOB_STATES] }] },
        message: "a terminal event comes only last in a finished job's log",
      },
      {
        id: 'jobPage.lastIsTerminal',
        when: { and: [{ equal: ['event.sequence', 'job.cursor'] }, { in: ['job.state', FINISHED_JOB_STATES] }] },
        check: { in: ['event.type', TERMINAL_EVENTS] },
        message: 'the last event of a finished job must be terminal',
      },
      {
        id: 'jobPage.terminalState',
        when: { in: ['event.type', TERMINAL_EVENTS] },
        check: {
          in: ['job.state', { map: 'event.type', to: { 'run.completed': ['completed'], 'run.cancelled': ['cancelled'], 'run.failed': ['failed', 'interrupted'] } }],
        },
        message: 'the terminal event does not match the job state',
      },
      {
        id: 'jobPage.interruptedUncertain',
        when: { and: [{ equal: ['event.type', text('run.failed')] }, { equal: ['job.state', text('interrupted')] }] },
        check: { equal: ['event.error.outcome', text('uncertain')] },
        message: 'an interrupted job ends with run.failed whose outcome is uncertain',
      },
    ],
  },

  /**
   * One event of a run's stream against the request and what the stream delivered before it:
   * `runId` is the stream's run, `approvals` the `{approvalId, callId}` of each approval
   * requested so far, `executions` the `{executionId, callId}` of each execution requested so far
   * (the stream reader keeps both lists; a rule cannot remember).
   */
  runEvent: {
    params: ['event', 'request', 'runId', 'approvals', 'executions'],
    rules: [
      {
        id: 'runStarted.providerModel',
        when: { equal: ['event.type', text('run.started')] },
        check: sameProviderAndModel('event', 'request'),
        message: 'run.started names another provider or model than the request',
      },
      {
        when: { equal: ['event.type', text('approval.requested')] },
        rules: [
          { id: 'approvalRequested.run', check: { equal: ['event.approval.runId', 'runId'] }, message: 'the approval belongs to another run' },
          {
            id: 'approvalRequested.idlePolicy',
            check: { equal: ['event.approval.idlePolicy', 'request.approvals.idlePolicy'] },
            message: 'the approval idlePolicy is not the requested policy',
          },
        ],
      },
      {
        when: { equal: ['event.type', text('approval.resolved')] },
        let: { approval: { find: 'approvals', where: { equal: ['it.approvalId', 'event.resolution.approvalId'] } } },
        rules: [
          { id: 'approvalResolved.run', check: { equal: ['event.resolution.runId', 'runId'] }, message: 'the resolution belongs to another run' },
          { id: 'approvalResolved.requested', check: { present: 'approval' }, message: 'the resolution answers no requested approval' },
          { id: 'approvalResolved.call', check: { equal: ['approval.callId', 'event.resolution.callId'] }, message: 'the resolution names another call than its approval' },
        ],
      },
      {
        when: { equal: ['event.type', text('tool.execution.requested')] },
        rules: [
          { id: 'toolExecution.run', check: { equal: ['event.execution.runId', 'runId'] }, message: 'the execution belongs to another run' },
          {
            id: 'toolExecution.declared',
            check: { in: ['event.execution.call.name', 'request.applicationTools[].name'] },
            message: 'the execution names a tool the request did not declare',
          },
          { id: 'toolExecution.selected', check: { in: ['event.execution.call.name', 'request.tools'] }, message: 'the execution names a tool the request did not select' },
          {
            id: 'toolExecution.executionOnce',
            check: { not: { in: ['event.execution.executionId', 'executions[].executionId'] } },
            message: 'the execution was requested before',
          },
          { id: 'toolExecution.callOnce', check: { not: { in: ['event.execution.call.id', 'executions[].callId'] } }, message: 'the call was dispatched before' },
          {
            id: 'toolExecution.limit',
            check: { less: [{ count: 'executions' }, MAX_EXECUTIONS_PER_RUN] },
            message: `a run may request at most ${MAX_EXECUTIONS_PER_RUN} executions`,
          },
        ],
      },
      {
        when: { equal: ['event.type', text('run.completed')] },
        apply: 'runResult',
        with: { answer: 'event.result', request: 'request', runId: 'runId' },
      },
    ],
  },

  // -------------------------------------------------------------------------
  // Requests (the host refuses a body that breaks them; the clients refuse it before sending)

  /** An index request: unique chunk ids, chunk locations of the source, effective ranges, a manifest that counts the chunks. */
  indexRequest: {
    params: ['request'],
    rules: [
      { id: 'indexRequest.chunkIds', check: { unique: 'request.chunks[].id' }, message: 'a chunk id is used twice' },
      { apply: 'contextSource', with: { source: 'request.source' } },
      {
        each: { in: 'request.chunks', as: 'chunk' },
        rules: [
          {
            id: 'indexRequest.chunkDocument',
            when: { present: 'chunk.location.documentId' },
            check: { equal: ['chunk.location.documentId', 'request.source.id'] },
            message: 'a chunk location.documentId is not the source',
          },
          {
            apply: 'sourceLocation',
            with: {
              page: { default: ['chunk.location.page', 'request.source.location.page'] },
              pageEnd: { default: ['chunk.location.pageEnd', 'request.source.location.pageEnd'] },
              startLine: { default: ['chunk.location.startLine', 'request.source.location.startLine'] },
              endLine: { default: ['chunk.location.endLine', 'request.source.location.endLine'] },
            },
          },
        ],
      },
      {
        when: { present: 'request.ingestion' },
        rules: [
          {
            id: 'indexRequest.manifestChunks',
            check: { equal: ['request.ingestion.chunks', { count: 'request.chunks' }] },
            message: 'the ingestion manifest counts another number of chunks',
          },
          {
            id: 'indexRequest.manifestBytes',
            check: { equal: ['request.ingestion.indexedTextBytes', { bytes: 'request.chunks[].text' }] },
            message: 'the ingestion manifest counts another number of indexed bytes',
          },
          {
            each: { in: 'request.chunks', as: 'chunk' },
            rules: [
              {
                id: 'indexRequest.chunkSize',
                check: { atMost: [{ bytes: 'chunk.text' }, 'request.ingestion.chunker.maxBytes'] },
                message: "a chunk is larger than the ingestion manifest's chunker allows",
              },
            ],
          },
          { apply: 'ingestionManifest', with: { manifest: 'request.ingestion' } },
        ],
      },
    ],
  },
};

/** The rule set each operation's answer must satisfy (parameters `answer` and `request`). */
export const ANSWER_RULES: Record<string, string> = {
  run: 'runResult',
  decideApproval: 'approvalReceipt',
  operatorDecideApproval: 'approvalReceipt',
  reportToolProgress: 'toolProgressReceipt',
  completeTool: 'toolResultReceipt',
  createSession: 'sessionCreated',
  readSession: 'sessionRead',
  listSessions: 'sessionList',
  deleteSession: 'sessionDeleted',
  submitJob: 'jobSubmitted',
  readJob: 'jobNamed',
  listJobs: 'jobList',
  cancelJob: 'jobNamed',
  jobEvents: 'jobEventPage',
  readRun: 'runNamed',
  runEvents: 'runEventPage',
  searchRetrieval: 'retrievalSearch',
  indexSource: 'indexReceipt',
  deleteSource: 'deleteReceipt',
  ingestDocument: 'ingestReceipt',
};

/** The rule set each operation's request body must satisfy (parameter `request`), beyond its schema. */
export const REQUEST_RULES: Record<string, string> = {
  indexSource: 'indexRequest',
};

/** The rule sets a stream reader evaluates per event. */
export const STREAM_RULES = { run: 'runEvent', job: 'jobEvent', record: 'runLogEvent' } as const;
