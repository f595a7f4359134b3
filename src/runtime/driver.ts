/**
 * AgenticDriver: the in-process runtime. parse -> (host authorizes) -> prepare -> (host
 * admits) -> loop -> result. Usable directly without HTTP; the host wraps exactly this object.
 */
import { DriverError } from '../protocol/errors.js';
import { RunRequest as RunRequestSchema } from '../protocol/schemas.js';
import { validatorFor } from '../protocol/validate.js';
import { MAX_JSON_DEPTH, valueTooDeep } from '../protocol/json-depth.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { compileSchema, type CompiledSchema } from './json-schema.js';
import type { ProviderAdapter, ProviderInfo } from '../providers/spec/v1.js';
import { executeRun } from './run-loop.js';
import type { PreparedRun } from './prepared-run.js';
import { MAX_APPLICATION_TOOL_BYTES, type ApprovalService, type ExecuteOptions, type RetrievalContext, type RunServices, type ToolExecutionService } from './services.js';
import { registerTools, type ApproveCallback, type HostTool, type RegisteredTool, type RunTool } from './tools.js';
import { jsonBytes } from '../shared/json-identity.js';
import type { Provider, RunEvent, RunRequest, RunResult } from './types.js';
import type { RunStartRecord, UsageRecord } from './usage-record.js';
import { DEFAULT_RETRIEVAL_LIMIT, MAX_CONTEXT_INPUTS, prepareContext } from './context.js';
import { Metering, type MeteringOptions } from './metering.js';

export type { PreparedRun } from './prepared-run.js';

export interface DriverLimits {
  maxSteps?: number;
  maxOutputTokens?: number;
  idleTimeoutMs?: number;
  maxAttempts?: number;
}

export interface DriverOptions {
  providers: ProviderAdapter[];
  tools?: HostTool[];
  /** Decides tools that require approval; absent means every such call fails closed. */
  approve?: ApproveCallback;
  /** Host caps; each always wins over a larger request value. */
  limits?: DriverLimits;
  /** Host id, operator labels and price table for usage records. */
  metering?: MeteringOptions;
  /** Metering sink, awaited at most 2 s; its failures never change a run's outcome. */
  onUsage?: (record: UsageRecord) => void | Promise<void>;
  /** Told that a run starts, before its provider is called; awaited at most 2 s, failures ignored. */
  onRunStarted?: (record: RunStartRecord) => void | Promise<void>;
  clock?: Clock;
  /** Minimum interval between `run.progress` events of one wait (default 1000 ms). */
  progressIntervalMs?: number;
  /** Enables interactive approvals (`approvals` on streaming runs), e.g. an `ApprovalRegistry`. */
  approvals?: ApprovalService;
  /** Enables application tools (`applicationTools` on streaming runs), e.g. a `ToolExecutionRegistry`. */
  toolExecutions?: ToolExecutionService;
  /** Told the unmasked cause whenever a run ends INTERNAL_ERROR (the wire only says "internal"). */
  onInternalError?: (error: unknown, runId: string) => void;
  /** Enables the `retrieval` run option (search before generation), e.g. a `RetrievalService`. */
  retrieval?: RetrievalContext;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Who the run is for; the host passes the token's subject. Default `local`. */
  subject?: string;
  /** The id of the caller's token, recorded in the usage record. */
  tokenId?: string;
  /** Whether advisory (`optional: true`) events may be delivered. Default false. */
  acceptOptionalEvents?: boolean;
  /** Application tools the caller's grant says must be reviewed before they run. */
  applicationToolApprovals?: ReadonlySet<string>;
  /** The caller keeps operation records (the host with its store), so `idempotencyKey` is accepted. */
  idempotency?: boolean;
}

const validateRequest = validatorFor<RunRequest>(RunRequestSchema);
const PROTOCOL_MAX = { maxSteps: 64, maxOutputTokens: 65_536, maxAttempts: 5 };
const DEFAULTS = { maxSteps: 8 };

export class AgenticDriver {
  readonly clock: Clock;
  private providers = new Map<string, ProviderAdapter>();
  private readonly tools: Map<string, RegisteredTool>;
  /** What every prepared run reaches beyond itself. */
  private readonly services: RunServices;
  private limits: DriverLimits;
  /** Runs in flight per adapter, and the replaced adapters to close once none is left. */
  private readonly inUse = new Map<ProviderAdapter, number>();
  private readonly retired = new Set<ProviderAdapter>();

  constructor(readonly options: DriverOptions) {
    this.clock = options.clock ?? systemClock;
    this.services = {
      clock: this.clock,
      progressIntervalMs: options.progressIntervalMs ?? 1000,
      approve: options.approve,
      approvals: options.approvals,
      toolExecutions: options.toolExecutions,
      onRunStarted: options.onRunStarted,
      metering: new Metering(options.metering),
      onUsage: options.onUsage,
      onInternalError: options.onInternalError,
      maxAttempts: options.limits?.maxAttempts,
      retrieval: options.retrieval,
      hold: (adapter) => this.hold(adapter),
    };
    this.providers = providerMap(options.providers);
    this.tools = registerTools(options.tools ?? []);
    validateLimits(options.limits ?? {});
    this.limits = { ...options.limits };
  }

  /**
   * Serves `adapters` from now on (a config reload). Runs already prepared keep the adapter
   * they started with; an adapter no longer listed is closed once its last run has ended.
   */
  replaceProviders(adapters: ProviderAdapter[]): void {
    const next = providerMap(adapters);
    const kept = new Set(next.values());
    for (const adapter of this.providers.values()) if (!kept.has(adapter)) this.retire(adapter);
    this.providers = next;
  }

  /** New host caps for runs prepared from now on (a config reload). */
  setLimits(limits: DriverLimits): void {
    validateLimits(limits);
    this.limits = { ...limits };
    this.services.maxAttempts = limits.maxAttempts;
  }

  private hold(adapter: ProviderAdapter): () => void {
    this.inUse.set(adapter, (this.inUse.get(adapter) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inUse.get(adapter) ?? 1) - 1;
      if (left > 0) return void this.inUse.set(adapter, left);
      this.inUse.delete(adapter);
      if (this.retired.delete(adapter)) void Promise.resolve(adapter.close?.()).catch(() => undefined);
    };
  }

  private retire(adapter: ProviderAdapter): void {
    if (this.inUse.has(adapter)) this.retired.add(adapter);
    else void Promise.resolve(adapter.close?.()).catch(() => undefined);
  }

  /** Static descriptions of every provider instance (no probes). */
  listProviders(): Provider[] {
    return [...this.providers.values()].map((adapter) => describeProvider(adapter.info));
  }

  provider(id: string): ProviderAdapter | undefined {
    return this.providers.get(id);
  }

  /**
   * The schema check alone, giving a private copy of the request. A caller that grants
   * providers and tools checks them on this copy before `prepareParsed`, so a caller that may
   * not use a provider or tool learns nothing about it (spec decision 2).
   */
  parse(input: unknown): RunRequest {
    // Before anything recursive (schema validation, structuredClone) can overflow the stack.
    if (valueTooDeep(input)) {
      throw new DriverError('INVALID_REQUEST', `The run request nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep.`);
    }
    if (!validateRequest(input)) {
      throw new DriverError('INVALID_REQUEST', `The run request is invalid: ${validateRequest.explain(input)}.`);
    }
    return structuredClone(input);
  }

  /** Full pre-execution validation. Throws a DriverError; emits nothing. */
  prepare(input: unknown, options: RunOptions = {}): PreparedRun {
    return this.prepareParsed(this.parse(input), options);
  }

  /** The rest of validation, on a request `parse` returned. */
  prepareParsed(request: RunRequest, options: RunOptions = {}): PreparedRun {
    if (request.session) throw new DriverError('SESSIONS_UNAVAILABLE', 'This host does not offer conversation sessions.');
    if (request.retrieval) {
      if (!this.services.retrieval) throw new DriverError('RETRIEVAL_UNAVAILABLE', 'This host does not offer retrieval.');
      if ((request.attachments?.length ?? 0) + (request.retrieval.limit ?? DEFAULT_RETRIEVAL_LIMIT) > MAX_CONTEXT_INPUTS) {
        throw new DriverError('INVALID_RETRIEVAL', `Attachments and retrieval passages together may not exceed ${MAX_CONTEXT_INPUTS}.`);
      }
    }
    if (request.idempotencyKey !== undefined && !options.idempotency) {
      throw new DriverError('IDEMPOTENCY_UNAVAILABLE', 'This host has no operation store, so idempotency keys are not accepted.');
    }
    const adapter = this.providers.get(request.provider);
    if (!adapter) throw new DriverError('UNKNOWN_PROVIDER', `Provider ${request.provider} is not configured.`);
    const info = adapter.info;
    const context = prepareContext(request, info);

    if ((request.retry?.maxAttempts ?? 1) > 1 && info.capabilities.safeRetries !== true) {
      throw new DriverError('UNSUPPORTED_CAPABILITY', `Provider ${info.id} does not support safe retries.`);
    }
    if (!info.models.includes(request.model)) {
      throw new DriverError('UNSUPPORTED_MODEL', `Model ${request.model} is not allowed on provider ${info.id}.`);
    }
    for (const capability of request.requiredCapabilities ?? []) {
      if (info.capabilities[capability] !== true) {
        throw new DriverError('UNSUPPORTED_CAPABILITY', `Provider ${info.id} does not advertise capability ${capability}.`);
      }
    }
    const toolNames = request.tools ?? [];
    if (toolNames.length > 0 && info.capabilities.tools !== true) {
      throw new DriverError('UNSUPPORTED_TOOLS', `Provider ${info.id} does not support tools.`);
    }
    if (new Set(toolNames).size !== toolNames.length) throw new DriverError('INVALID_REQUEST', 'The tools list names a tool twice.');
    const tools = this.selectTools(request, options);
    if (request.approvals) {
      const approvals = this.services.approvals;
      if (!approvals) throw new DriverError('APPROVAL_UNAVAILABLE', 'This host does not offer interactive approvals.');
      if (request.approvals.idlePolicy === 'pause' && approvals.policy.allowIdlePause === false) {
        throw new DriverError('APPROVAL_POLICY', 'This host does not let runs pause their idle timer for approvals.');
      }
    }
    const outputSchema = request.outputSchema ? compileSchema(request.outputSchema) : undefined;
    if (request.outputArtifact?.mediaType === 'application/json' && !outputSchema) {
      throw new DriverError('INVALID_ARTIFACT', 'A JSON artifact needs an outputSchema.');
    }

    const limits = this.limits;
    return {
      request,
      adapter,
      subject: options.subject ?? 'local',
      tokenId: options.tokenId,
      tools,
      outputSchema,
      context,
      maxSteps: Math.min(request.maxSteps ?? DEFAULTS.maxSteps, limits.maxSteps ?? PROTOCOL_MAX.maxSteps),
      maxOutputTokens: outputTokenLimit(request.maxOutputTokens, limits.maxOutputTokens),
      idleTimeoutMs: effectiveIdleTimeout(request.idleTimeoutMs, limits.idleTimeoutMs),
      acceptOptionalEvents: options.acceptOptionalEvents ?? false,
      services: this.services,
    };
  }

  /** Host tools and the run's application tools, in the order the request selected them. */
  private selectTools(request: RunRequest, options: RunOptions): RunTool[] {
    const definitions = new Map<string, NonNullable<RunRequest['applicationTools']>[number]>();
    if (request.applicationTools) {
      const policy = this.services.toolExecutions?.policy;
      if (!policy) throw new DriverError('APPLICATION_TOOLS_UNAVAILABLE', 'This host does not offer application tools.');
      for (const definition of request.applicationTools) {
        if (definitions.has(definition.name) || this.tools.has(definition.name)) {
          throw new DriverError('TOOL_DEFINITION_CONFLICT', `Tool ${definition.name} is defined twice or clashes with a host tool.`);
        }
        if (!(request.tools ?? []).includes(definition.name)) {
          throw new DriverError('INVALID_REQUEST', `Application tool ${definition.name} must also be listed in tools.`);
        }
        if (jsonBytes(definition) > MAX_APPLICATION_TOOL_BYTES) {
          throw new DriverError('TOOL_DEFINITION_LIMIT', `The definition of ${definition.name} exceeds ${MAX_APPLICATION_TOOL_BYTES} bytes.`);
        }
        definitions.set(definition.name, definition);
      }
    }
    return (request.tools ?? []).map((name): RunTool => {
      const definition = definitions.get(name);
      if (definition) {
        // An unusable output schema is refused now, before the run starts.
        if (definition.outputSchema) compileSchema(definition.outputSchema);
        const requiresApproval =
          this.services.toolExecutions!.policy.requireApproval !== false || definition.requiresApproval === true || (options.applicationToolApprovals?.has(name) ?? false);
        return {
          kind: 'application',
          name,
          description: definition.description,
          inputSchema: definition.inputSchema,
          input: compileSchema(definition.inputSchema),
          outputSchema: definition.outputSchema,
          requiresApproval,
        };
      }
      const registered = this.tools.get(name);
      if (!registered) throw new DriverError('UNKNOWN_TOOL', `Tool ${name} is not registered on this host.`);
      const { tool, input } = registered;
      return { kind: 'host', name, description: tool.description, inputSchema: tool.inputSchema, input, requiresApproval: tool.requiresApproval === true, tool };
    });
  }

  /**
   * Runs a prepared request. Closing the iterator early (break/return) cancels the run,
   * exactly like aborting `signal`.
   */
  execute(prepared: PreparedRun, signal?: AbortSignal, options?: ExecuteOptions): AsyncGenerator<RunEvent> {
    return executeRun(prepared, signal, options);
  }

  /** Validation errors are thrown from the first `next()`, before any event. */
  async *stream(request: unknown, options: RunOptions = {}): AsyncGenerator<RunEvent> {
    const prepared = this.prepare(request, options);
    yield* this.execute(prepared, options.signal);
  }

  /** Runs to the end and returns the result, or throws the terminal error. */
  async run(request: unknown, options: RunOptions = {}): Promise<RunResult> {
    const candidate = request as Partial<RunRequest> | null;
    if (candidate && typeof candidate === 'object') requireNoStream(candidate);
    for await (const event of this.stream(request, options)) {
      if (event.type === 'run.completed') return event.result;
      if (event.type === 'run.failed' || event.type === 'run.cancelled') throw DriverError.from(event.error);
    }
    throw new DriverError('INCOMPLETE_STREAM', 'The run ended without a terminal event.');
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.providers.values(), ...this.retired].map((adapter) => adapter.close?.()));
  }
}

function providerMap(adapters: readonly ProviderAdapter[]): Map<string, ProviderAdapter> {
  const map = new Map<string, ProviderAdapter>();
  for (const adapter of adapters) {
    if (map.has(adapter.info.id)) throw new DriverError('INVALID_CONFIG', `Provider ${adapter.info.id} is configured twice.`);
    map.set(adapter.info.id, adapter);
  }
  return map;
}

/** The "needs a stream" rule: interactive approvals and application tools need an event stream. */
export function requireNoStream(request: Pick<Partial<RunRequest>, 'approvals' | 'applicationTools'>): void {
  if (request.approvals) throw new DriverError('APPROVAL_STREAM_REQUIRED', 'Interactive approvals need a streaming run.');
  if (request.applicationTools) throw new DriverError('TOOL_STREAM_REQUIRED', 'Application tools need a streaming run.');
}

export function describeProvider(info: ProviderInfo): Provider {
  const provider: Provider = {
    id: info.id,
    name: info.name,
    vendor: info.vendor,
    authMode: info.authMode,
    capabilities: { ...info.capabilities },
    models: [...info.models],
  };
  if (info.inputMediaTypes) provider.inputMediaTypes = structuredClone(info.inputMediaTypes);
  if (info.usageStatId) provider.usageStatId = info.usageStatId;
  return provider;
}

/**
 * The output-token limit a provider is asked for: the run's, capped by the host's; the host's
 * alone when the run names none; none at all when neither does (the vendor's own default).
 */
export function outputTokenLimit(requested: number | undefined, host: number | undefined): number | undefined {
  if (requested === undefined) return host;
  return host === undefined ? requested : Math.min(requested, host);
}

/** Minimum of the positive values; none positive means no inactivity timer at all. */
export function effectiveIdleTimeout(requested: number | undefined, host: number | undefined): number | undefined {
  const positive = [requested, host].filter((value): value is number => value !== undefined && value > 0);
  return positive.length === 0 ? undefined : Math.min(...positive);
}

function validateLimits(limits: DriverLimits): void {
  const bounded = (value: number | undefined, min: number, max: number) =>
    value === undefined || (Number.isSafeInteger(value) && value >= min && value <= max);
  if (
    !bounded(limits.maxSteps, 1, PROTOCOL_MAX.maxSteps) ||
    !bounded(limits.maxOutputTokens, 1, PROTOCOL_MAX.maxOutputTokens) ||
    !bounded(limits.maxAttempts, 1, PROTOCOL_MAX.maxAttempts) ||
    !bounded(limits.idleTimeoutMs, 0, 2_147_483_647)
  ) {
    throw new DriverError('INVALID_CONFIG', 'Driver limits are out of range.');
  }
}
