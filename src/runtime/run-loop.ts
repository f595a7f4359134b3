/**
 * The bounded model/tool loop of one run. It pushes event payloads into a bounded
 * channel; the generator stamps them (runId, sequence, timestamp) as they are delivered.
 */
import { randomUUID } from 'node:crypto';
import { DriverError, toDriverError } from '../protocol/errors.js';
import { contractError } from './provider-errors.js';
import { jsonTextTooDeep, MAX_JSON_DEPTH } from '../protocol/json-depth.js';
import { abortable } from '../shared/abort.js';
import { isoTimestamp } from '../shared/clock.js';
import { CONTEXT_INSTRUCTIONS, draftArtifact, retrievalContext, type PreparedContext } from './context.js';
import type { PreparedRun } from './prepared-run.js';
import { EventChannel } from './event-channel.js';
import { IdleTimer } from './idle-timer.js';
import { isJournaled, type ExecuteOptions, type RunCheckpoint, type RunJournal, type RunParking, type RunServices, type StepGate } from './services.js';
import type { ProviderContinuation, ProviderMessage, ProviderPart, ProviderRequest } from '../providers/contract/v1.js';
import type { RunTool } from './tools.js';
import { ToolGate, type Parked } from './tool-gate.js';
import type { ErrorInfo, EventPayload, FinishReason, RunEvent, RunProgressPhase, RunResult, ToolCall, Usage } from './types.js';
import type { RetrievalResult } from '../protocol/schemas.js';
import { normalizeUsage, UsageAccumulator } from './usage.js';
import type { RunStartRecord, UsageRecord } from './usage-record.js';

const USAGE_SINK_BOUND_MS = 2000;
const RUN_ENDED = Symbol('run ended');
/** Abort reasons that end a run as `run.failed` rather than `run.cancelled`. */
const FAILING_ABORTS: ReadonlySet<string> = new Set(['OUTPUT_BUFFER_LIMIT']);

export async function* executeRun(prepared: PreparedRun, callerSignal?: AbortSignal, options: ExecuteOptions = {}): AsyncGenerator<RunEvent> {
  const runId = options.runId ?? randomUUID();
  const journal = options.journal;
  const abort = options.controller ?? new AbortController();
  const onCallerAbort = () => abort.abort(callerSignal?.reason);
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });

  const release = prepared.services.hold?.(prepared.adapter);
  const channel = new EventChannel((error) => abort.abort(error));
  const body = new RunBody(prepared, runId, abort, channel, journal, options);
  const task = body.run();
  // A resumed run's events continue its record's sequence.
  let sequence = options.resume?.sequence ?? 0;
  let ended = false;
  try {
    // The channel is read here directly: no generator of its own between the run and its consumer.
    for (;;) {
      const payload = channel.take();
      if (payload === undefined) {
        if (channel.ended) break;
        await channel.arrival();
        continue;
      }
      sequence += 1;
      const { type, ...fields } = payload;
      const event = { type, runId, sequence, timestamp: isoTimestamp(prepared.services.clock), ...fields } as RunEvent;
      if (type === 'run.completed' || type === 'run.failed' || type === 'run.cancelled') ended = true;
      yield event;
    }
  } finally {
    if (!ended) abort.abort(new DriverError('CANCELLED', 'The run was cancelled by its consumer.'));
    callerSignal?.removeEventListener('abort', onCallerAbort);
    try {
      await task;
    } finally {
      release?.();
    }
  }
}

interface StepOutcome {
  text: string;
  toolCalls: ToolCall[];
  usage: Usage | undefined;
  finishReason: FinishReason;
  native: unknown;
}

class RunBody {
  private readonly meter = new UsageAccumulator();
  private readonly idle: IdleTimer;
  private readonly startedAt: number;
  private steps = 0;
  private readonly gate: ToolGate;
  /** The attachments, plus the retrieved passages once the search ran. */
  private context: PreparedContext;
  private retrieved: RetrievalResult | undefined;

  private readonly services: RunServices;
  private readonly continuation: ProviderContinuation | undefined;
  private readonly parking: RunParking | undefined;
  private readonly stepGate: StepGate | undefined;
  private readonly resume: RunCheckpoint | undefined;
  /** Set once the run handed its checkpoint over: it ends here without a terminal event, to go on elsewhere. */
  private parked = false;
  /** Settles once the run's start record is written (or its bounded wait ended); a resumed run has one already. */
  private started: Promise<void> = Promise.resolve();

  constructor(
    private readonly prepared: PreparedRun,
    private readonly runId: string,
    private readonly abort: AbortController,
    private readonly channel: EventChannel,
    private readonly journal: RunJournal | undefined,
    options: ExecuteOptions,
  ) {
    this.services = prepared.services;
    this.context = prepared.context;
    this.continuation = options.continuation;
    this.parking = options.parking;
    this.stepGate = options.steps;
    this.resume = options.resume?.checkpoint;
    const ms = prepared.idleTimeoutMs;
    this.idle = new IdleTimer(this.services.clock, ms, () =>
      abort.abort(new DriverError('IDLE_TIMEOUT', `The run made no progress for ${ms} ms.`, { retryable: true })),
    );
    this.startedAt = this.resume?.startedAt ?? this.services.clock.now();
    this.gate = new ToolGate({
      prepared,
      runId,
      signal: abort.signal,
      idle: this.idle,
      commit: (event) => this.commit(event),
      progress: (phase) => this.progressReporter(phase),
      cancel: (reason) => abort.abort(reason),
    });
  }

  private get signal(): AbortSignal {
    return this.abort.signal;
  }

  async run(): Promise<void> {
    const { request } = this.prepared;
    let status: UsageRecord['status'] = 'completed';
    let errorCode: string | undefined;
    try {
      let messages: ProviderMessage[];
      let first = 1;
      if (this.resume) {
        messages = this.restore(this.resume);
        if (await this.runCalls(messages, this.gate.resumed(this.resume.calls), this.resume.waiting)) return;
        first = this.resume.step + 1;
      } else {
        // The start record is written while the provider is asked, and nothing reaches the caller before
        // it is durable. It is queued a turn later, so that its commit — which holds the event loop while
        // the log is flushed — comes after the provider's request has left, while the provider works.
        this.started = nextTurn().then(() => this.recordStart());
        this.channel.holdUntil(this.started);
        await this.commit({ type: 'run.started', provider: request.provider, model: request.model });
        this.signal.throwIfAborted();
        this.idle.start();
        await this.retrieve();
        messages = this.initialMessages();
      }
      for (let step = first; ; step += 1) {
        this.signal.throwIfAborted();
        if (step > 1) await this.revalidate();
        await this.stepGate?.before(step, this.signal);
        await this.commit({ type: 'step.started', step });
        this.steps = step;
        const outcome = await this.modelStep(messages, step);
        await this.stepGate?.after(outcome.usage);
        if (outcome.toolCalls.length === 0) {
          await this.revalidate();
          await this.commitTerminal({ type: 'run.completed', result: this.result(outcome) }, true);
          return;
        }
        if (step >= this.prepared.maxSteps) {
          throw new DriverError('STEP_LIMIT', `The model still requested tools at the last allowed step (${this.prepared.maxSteps}).`);
        }
        const batch = this.gate.validate(outcome.toolCalls);
        messages.push({ role: 'assistant', content: outcome.text, toolCalls: structuredClone(outcome.toolCalls), native: outcome.native });
        if (await this.runCalls(messages, batch)) return;
      }
    } catch (error) {
      const { type, info } = this.terminal(error);
      status = type === 'run.cancelled' ? 'cancelled' : 'failed';
      errorCode = info.code;
      await this.commitTerminal({ type, error: info }, false);
    } finally {
      this.idle.stop();
      // Stops anything still attached to the run's signal; the run already has its terminal event (or its checkpoint).
      if (!this.signal.aborted) this.abort.abort(RUN_ENDED);
      if (this.parked) this.channel.close();
      else {
        // The usage record replaces the start record: it must not be queued before it.
        await this.started;
        await this.recordUsage(status, errorCode);
      }
    }
  }

  /**
   * Runs a step's checked calls in order, each answer joining the conversation. True when the
   * run checkpointed at one of them (it waits for a person, and goes on from there later).
   * `waiting`: the first call was already started, and waits for this.
   */
  private async runCalls(messages: ProviderMessage[], batch: { call: ToolCall; tool: RunTool }[], waiting?: RunCheckpoint['waiting']): Promise<boolean> {
    // Nothing a tool or an approval does outside the run's events comes before its start record.
    await this.started;
    for (const [index, { call, tool }] of batch.entries()) {
      const answer = await this.gate.execute(call, tool, { parkable: this.parking !== undefined, ...(index === 0 && waiting ? { waiting } : {}) });
      if ('parked' in answer) {
        await this.park(messages, batch.slice(index).map((item) => item.call), answer);
        return true;
      }
      messages.push(answer);
    }
    return false;
  }

  /** Hands the run's checkpoint over; the run then ends here, without a terminal event or a usage record. */
  private async park(messages: ProviderMessage[], calls: ToolCall[], parked: Parked): Promise<void> {
    const now = this.services.clock.now();
    const idleMs = this.prepared.idleTimeoutMs;
    // Woken early, the run waits on for the same answer under the same deadlines.
    const same = this.resume && JSON.stringify(this.resume.waiting) === JSON.stringify(parked.parked) ? this.resume : undefined;
    // The idle policy `pause` stops the idle clock while a person decides; otherwise it keeps running.
    const idleDeadline = same ? same.idleDeadline : idleMs !== undefined && !parked.pausesIdle ? now + idleMs : undefined;
    const deadlines = same ? (same.wakeAt !== undefined ? [same.wakeAt] : []) : [parked.expiresAt, idleDeadline].filter((at): at is number => at !== undefined);
    const checkpoint: RunCheckpoint = {
      version: 1,
      step: this.steps,
      messages: structuredClone(messages),
      calls: structuredClone(calls),
      usedCallIds: this.gate.usedIds(),
      waiting: parked.parked,
      meter: this.meter.snapshot(),
      startedAt: this.startedAt,
      context: structuredClone(this.context),
      ...(this.retrieved ? { retrieved: structuredClone(this.retrieved) } : {}),
      ...(idleDeadline !== undefined ? { idleDeadline } : {}),
      ...(deadlines.length > 0 ? { wakeAt: Math.min(...deadlines) } : {}),
    };
    await this.parking!.park(checkpoint);
    this.parked = true;
  }

  /** Takes a checkpoint's state back; returns its conversation. A lapsed idle deadline ends the run as it would have ended waiting. */
  private restore(checkpoint: RunCheckpoint): ProviderMessage[] {
    this.steps = checkpoint.step;
    this.meter.restore(checkpoint.meter);
    this.gate.restoreIds(checkpoint.usedCallIds);
    this.context = checkpoint.context;
    this.retrieved = checkpoint.retrieved;
    const ms = this.prepared.idleTimeoutMs;
    if (checkpoint.idleDeadline !== undefined && this.services.clock.now() >= checkpoint.idleDeadline) {
      this.abort.abort(new DriverError('IDLE_TIMEOUT', `The run made no progress for ${ms} ms.`, { retryable: true }));
    } else {
      this.idle.start();
    }
    return checkpoint.messages;
  }

  /** Sends an event on and, when the run has a journal, goes on only once it is committed. */
  private async commit(event: EventPayload): Promise<void> {
    this.channel.push(event);
    if (this.journal && isJournaled(event)) await this.journal.record(this.runId, event);
  }

  /**
   * The terminal event. A completed result the journal could not commit throws (the run then
   * fails); a failure is sent even when the journal cannot take it (its record stays unfinished,
   * which replays as uncertain).
   */
  private async commitTerminal(event: EventPayload, mustCommit: boolean): Promise<void> {
    if (this.journal) {
      try {
        await this.journal.record(this.runId, event);
      } catch (error) {
        if (mustCommit) throw error;
      }
    }
    this.channel.pushTerminal(event);
  }

  /** The `retrieval` option: search before generation; no passage → NO_RETRIEVAL_EVIDENCE. */
  private async retrieve(): Promise<void> {
    const { request, subject } = this.prepared;
    const options = request.retrieval;
    const retrieval = this.services.retrieval;
    if (!options || !retrieval) return;
    const progress = this.progressReporter('context');
    progress();
    const result = await abortable(
      retrieval.search({ ...options, query: options.query ?? request.input }, { subject, runId: this.runId, signal: this.signal, onProgress: progress }),
      this.signal,
    );
    if (result.hits.length === 0) throw new DriverError('NO_RETRIEVAL_EVIDENCE', 'The search found no passage to ground the answer on.');
    const passages = retrievalContext(result, this.context.manifests);
    this.retrieved = result;
    this.context = { items: [...this.context.items, ...passages.items], manifests: [...this.context.manifests, ...passages.manifests] };
  }

  /** The evidence must still be visible, at the same revisions, before each further step and before completion. */
  private async revalidate(): Promise<void> {
    if (!this.retrieved) return;
    await abortable(this.services.retrieval!.revalidate(this.retrieved, { subject: this.prepared.subject, runId: this.runId, signal: this.signal }), this.signal);
  }

  private initialMessages(): ProviderMessage[] {
    const { request } = this.prepared;
    const { context } = this;
    const messages: ProviderMessage[] = (request.history ?? []).map((m) => ({ role: m.role, content: m.content }));
    messages.push(context.items.length > 0 ? { role: 'user', content: request.input, context: context.items } : { role: 'user', content: request.input });
    return messages;
  }

  private instructions(): string | undefined {
    const { request, outputSchema } = this.prepared;
    const { context } = this;
    const parts = [request.instructions ?? ''];
    if (outputSchema) {
      parts.push(`Respond with only a JSON value that matches this JSON Schema:\n${JSON.stringify(request.outputSchema)}`);
    }
    if (context.items.length > 0) parts.push(CONTEXT_INSTRUCTIONS);
    const text = parts.filter((part) => part.trim() !== '').join('\n\n');
    return text === '' ? undefined : text;
  }

  private async modelStep(messages: ProviderMessage[], step: number): Promise<StepOutcome> {
    const { request, adapter, tools, maxOutputTokens } = this.prepared;
    const providerRequest: ProviderRequest = {
      model: request.model,
      messages: structuredClone(messages),
      tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    };
    if (maxOutputTokens !== undefined) providerRequest.maxOutputTokens = maxOutputTokens;
    const instructions = this.instructions();
    if (instructions !== undefined) providerRequest.instructions = instructions;
    if (request.outputSchema) providerRequest.outputSchema = request.outputSchema;
    if (tools.length > 0) {
      const callTool = this.gate.midStepCaller();
      providerRequest.callTool = async (...args) => {
        await this.started;
        return callTool(...args);
      };
    }
    if (request.approvals) providerRequest.requestApproval = async (call) => {
      await this.started;
      await this.gate.review(call);
    };
    // Only the first step continues the session's native state; later steps carry their own messages.
    if (this.continuation && step === 1) providerRequest.continuation = this.continuation;
    if (request.retry) {
      const cap = this.services.maxAttempts ?? request.retry.maxAttempts;
      providerRequest.retry = { ...request.retry, maxAttempts: Math.min(request.retry.maxAttempts, cap) };
    }

    this.meter.stepStarted();
    const progress = this.progressReporter('model');
    const outcome: StepOutcome = { text: '', toolCalls: [], usage: undefined, finishReason: 'stop', native: undefined };
    let finished = false;
    const take = (part: ProviderPart) => {
      if (finished) throw new DriverError('INVALID_PROVIDER_RESPONSE', 'The provider sent output after finishing the step.');
      switch (part.type) {
        case 'text-delta':
          if (part.text === '') break;
          outcome.text += part.text;
          this.idle.touch();
          this.channel.push({ type: 'text.delta', text: part.text });
          break;
        case 'progress':
          progress();
          break;
        case 'tool-call':
          this.idle.touch();
          outcome.toolCalls.push(part.call);
          break;
        case 'usage':
          outcome.usage = normalizeUsage(part.usage);
          break;
        case 'advisory':
          if (this.prepared.acceptOptionalEvents) this.channel.push({ ...part.event, optional: true } as unknown as EventPayload);
          break;
        case 'finish':
          finished = true;
          outcome.finishReason = part.finishReason;
          outcome.native = part.native;
          break;
      }
    };
    // Batches when the adapter hands them over (an upstream read's parts at once), else one part at a time.
    const parts = adapter.streamBatches ? adapter.streamBatches(providerRequest, this.signal) : adapter.stream(providerRequest, this.signal);
    const iterator: AsyncIterator<ProviderPart | readonly ProviderPart[]> = parts[Symbol.asyncIterator]();
    const race = new AbortRace(this.signal);
    try {
      for (;;) {
        const next = await race.next(iterator);
        if (next.done) break;
        const value = next.value;
        if (isBatch(value)) for (const part of value) take(part);
        else take(value);
      }
    } catch (error) {
      // A code the provider chose is bounded before it reaches events, records, logs and labels.
      throw error instanceof DriverError ? contractError(error, 'PROVIDER_ERROR') : error;
    } finally {
      race.dispose();
      if (!finished) void iterator.return?.(undefined)?.catch(() => undefined);
    }
    if (!finished) throw new DriverError('INVALID_PROVIDER_RESPONSE', 'The provider ended the step without finishing it.');
    this.idle.touch();
    this.meter.stepCompleted(outcome.usage);
    if (outcome.usage) await this.commit({ type: 'usage.reported', step: this.steps, usage: outcome.usage });
    return outcome;
  }

  /** Real progress: resets the idle timer; `run.progress` at most once per interval per wait. */
  private progressReporter(phase: RunProgressPhase): () => void {
    let last: number | undefined;
    return () => {
      if (this.signal.aborted) return;
      this.idle.touch();
      const now = this.services.clock.now();
      if (last !== undefined && now - last < this.services.progressIntervalMs) return;
      last = now;
      this.channel.push({ type: 'run.progress', phase });
    };
  }

  private result(outcome: StepOutcome): RunResult {
    const { request, outputSchema } = this.prepared;
    const { context } = this;
    const result: RunResult = {
      runId: this.runId,
      provider: request.provider,
      model: request.model,
      text: outcome.text,
      usage: this.meter.totals(),
      steps: this.steps,
      finishReason: outcome.finishReason,
    };
    if (outputSchema) {
      let output: unknown;
      if (jsonTextTooDeep(outcome.text)) {
        throw new DriverError('INVALID_OUTPUT', `The model output nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep.`);
      }
      try {
        output = JSON.parse(outcome.text);
      } catch {
        throw new DriverError('INVALID_OUTPUT', 'The model output is not JSON.');
      }
      const problem = outputSchema.check(output);
      if (problem) throw new DriverError('INVALID_OUTPUT', `The model output does not match the output schema: ${problem}.`);
      result.output = output;
    }
    if (context.manifests.length > 0) result.sources = structuredClone(context.manifests);
    if (this.retrieved) result.retrieval = structuredClone(this.retrieved);
    if (request.outputArtifact) {
      const content = request.outputArtifact.mediaType === 'application/json' ? JSON.stringify(result.output) : outcome.text;
      result.artifacts = [draftArtifact(request, content, context.manifests)];
    }
    this.signal.throwIfAborted();
    return result;
  }

  private terminal(error: unknown): { type: 'run.failed' | 'run.cancelled'; info: ErrorInfo } {
    const reason: unknown = this.signal.reason;
    // A consumer too slow for its buffer makes the run fail; other aborts cancel it.
    const failedByAbort = this.signal.aborted && reason instanceof DriverError && FAILING_ABORTS.has(reason.code);
    const cancelled = this.signal.aborted && !failedByAbort;
    let failure: DriverError;
    if (this.signal.aborted) {
      failure = reason instanceof DriverError ? reason : new DriverError('CANCELLED', 'The run was cancelled.');
    } else {
      failure = toDriverError(error);
      if (!(error instanceof DriverError)) this.services.onInternalError?.(error, this.runId);
    }
    // Anything else that chose its own code (an in-process callback) is bounded the same way.
    failure = contractError(failure, 'INTERNAL_ERROR', 'The run');
    if (this.gate.pending && failure.outcome !== 'uncertain') {
      const keep = failure.code === 'IDLE_TIMEOUT' || failure.code === 'CANCELLED';
      failure = keep
        ? new DriverError(failure.code, failure.message, { retryable: false, outcome: 'uncertain' })
        : new DriverError('TOOL_OUTCOME_UNCERTAIN', 'A tool was running when the run ended; its effects are unknown.', {
            retryable: false,
            outcome: 'uncertain',
          });
    }
    return { type: cancelled ? 'run.cancelled' : 'run.failed', info: failure.toJSON() };
  }

  private startRecord(): RunStartRecord {
    const { adapter, request, subject, tokenId } = this.prepared;
    return this.services.metering.start({ runId: this.runId, subject, tokenId, adapter, model: request.model, startedAt: this.startedAt });
  }

  private async recordStart(): Promise<void> {
    const sink = this.services.onRunStarted;
    if (sink) await boundedSink(() => sink(this.startRecord()));
  }

  private async recordUsage(status: UsageRecord['status'], errorCode: string | undefined): Promise<void> {
    const sink = this.services.onUsage;
    if (!sink) return;
    const end = { status, errorCode, finishedAt: this.services.clock.now(), startedAt: this.startedAt, steps: this.steps, meter: this.meter };
    const record = this.services.metering.finish(this.startRecord(), end);
    await boundedSink(() => sink(record));
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function isBatch(value: ProviderPart | readonly ProviderPart[]): value is readonly ProviderPart[] {
  return Array.isArray(value);
}

/** Awaits a metering sink at most USAGE_SINK_BOUND_MS; its failures never change a run's outcome. */
async function boundedSink(call: () => void | Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(call),
      new Promise((resolve) => (timer = setTimeout(resolve, USAGE_SINK_BOUND_MS))),
    ]);
  } catch {
    // A metering failure never changes the run's outcome.
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `abortable` for the many awaits of one step's part stream: one abort listener for the
 * whole step instead of an add/remove pair per part.
 */
class AbortRace {
  private reject: ((reason: unknown) => void) | undefined;
  private readonly onAbort = () => this.reject?.(this.signal.reason);

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  next<T>(iterator: AsyncIterator<T>): Promise<IteratorResult<T>> {
    const promise = iterator.next();
    if (this.signal.aborted) {
      promise.catch(() => undefined);
      return Promise.reject(this.signal.reason);
    }
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      this.reject = reject;
      promise.then(resolve, reject);
    });
  }

  dispose(): void {
    this.signal.removeEventListener('abort', this.onAbort);
    this.reject = undefined;
  }
}
