/**
 * The provider contract, version 1: one small interface every vendor adapter implements.
 * An adapter turns one model step into a stream of typed parts; the runtime owns the
 * loop, tools, validation, events and limits. This file imports only the wire contract, so an
 * adapter needs nothing from the runtime or the host.
 */
import type { Static } from '@sinclair/typebox';
import type {
  Capabilities,
  ContextManifest,
  ContextSource,
  FinishReason,
  MediaType,
  ModelCatalog,
  ProviderHealth,
  RetryPolicy,
  ToolCall,
  Usage,
} from '../../protocol/schemas.js';

export type { Capabilities, FinishReason, MediaType, ModelCatalog, ProviderHealth, ToolCall, Usage };
export type RetryPolicyValue = Static<typeof RetryPolicy>;

/** One context attachment as the adapter receives it with the user turn. */
export interface ContextItem {
  source: Static<typeof ContextSource>;
  mediaType: Static<typeof ContextManifest>['mediaType'];
  /** Text content for text media. */
  text?: string;
  /** Base64 content for binary media. */
  data?: string;
}

export interface ProviderInfo {
  id: string;
  name: string;
  vendor: string;
  authMode: 'api-key' | 'cli-session' | 'none';
  capabilities: Capabilities;
  /** Explicit model allowlist; `[]` denies every model. */
  models: string[];
  inputMediaTypes?: Record<string, MediaType[]>;
  usageStatId?: string;
  /** Where this adapter's usage counts come from; default `provider-reported`. */
  usageSource?: 'provider-reported' | 'estimated' | 'synthetic';
}

export interface ProviderToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export type ProviderMessage =
  | { role: 'user'; content: string; context?: ContextItem[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[]; native?: unknown }
  | { role: 'tool'; callId: string; name: string; content: string };

/**
 * Runs one tool call in the middle of a provider's step (agents that call tools mid-turn,
 * such as CLI agents through an MCP bridge): the same checks, approvals, events and limits
 * as a call between steps. Resolves with the encoded result the model sees; rejects with the
 * error the run then fails with.
 */
export type ToolCaller = (call: ToolCall) => Promise<string>;

/**
 * Puts an action the provider itself wants to take (a CLI agent's own tool) through the run's
 * approval gate, as for a tool that requires approval. Resolves when approved; rejects with
 * the error the run then fails with.
 */
export type ApprovalRequester = (call: ToolCall) => Promise<void>;

export interface ProviderRequest {
  model: string;
  instructions?: string;
  messages: ProviderMessage[];
  tools: ProviderToolDefinition[];
  /**
   * The output-token limit the run or the host set; absent when neither did, and then the
   * adapter sends none (a vendor whose API requires one gets the adapter's documented default).
   */
  maxOutputTokens?: number;
  /** The run's structured-output schema, for vendors that can constrain decoding. */
  outputSchema?: Record<string, unknown>;
  retry?: RetryPolicyValue;
  /** Present when `tools` is non-empty; adapters that execute calls mid-step use it instead of yielding `tool-call` parts. */
  callTool?: ToolCaller;
  /** Present only when the run opted into interactive approvals. */
  requestApproval?: ApprovalRequester;
  /** Present on a native-mode session turn, for adapters that continue their own conversation state. */
  continuation?: ProviderContinuation;
}

/**
 * A conversation session the adapter may continue in its own state instead of reading the
 * replayed history. The state is opaque to the host, kept only in its store and never shown.
 */
export interface ProviderContinuation {
  /** The host's session id (a UUID): names the adapter's private state for the session. */
  sessionId: string;
  /** What the adapter saved on the session's last turn; absent on the first turn or after a replay elsewhere. */
  state?: string;
  /** How many leading `messages` are the session's history, already in the native state when `state` is honoured. */
  historyLength: number;
  /** Idle time after which the session expires: private state left behind may be swept after it. */
  retentionMs: number;
  /** Records the state the next turn gets as `state`; a turn that saves nothing leaves the next one replaying. */
  save(state: string): void;
}

/** What an adapter yields while one model step runs. */
export type ProviderPart =
  /** Visible text, in order. The step's text is the concatenation of its deltas. */
  | { type: 'text-delta'; text: string }
  /** Real progress without visible text (reasoning, tool-argument streaming, CLI activity). */
  | { type: 'progress' }
  | { type: 'tool-call'; call: ToolCall }
  /** Usage for the step; a later part replaces an earlier one. */
  | { type: 'usage'; usage: Usage }
  /** Advisory information, delivered as an `optional: true` event only to consumers that opted in. */
  | { type: 'advisory'; event: { type: string; [field: string]: unknown } }
  /** End of the step. `native` is opaque vendor state replayed on the next step. */
  | { type: 'finish'; finishReason: FinishReason; native?: unknown };

export interface ProviderInspection {
  health: ProviderHealth;
  modelCatalog?: ModelCatalog;
  /** The installed version of what the adapter drives (CLI providers), for operators' diagnostics. */
  version?: string;
}

export interface ProviderAdapter {
  readonly info: ProviderInfo;
  /** Run one model step. Must stop promptly and throw when `signal` aborts. */
  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderPart>;
  /**
   * Optional: the same parts as `stream`, in the same order, handed over as they arrive together
   * (an upstream read's worth at once). The runtime prefers it: one hand-off per batch, not per part.
   */
  streamBatches?(request: ProviderRequest, signal: AbortSignal): AsyncIterable<readonly ProviderPart[]>;
  /** Optional read-only probe for discovery (health, model catalog). */
  inspect?(signal: AbortSignal): Promise<ProviderInspection>;
  /** Optional release of resources (warm processes, sockets) when the driver closes. */
  close?(): Promise<void>;
  /** Removes the adapter's private state for a session (it was deleted); adapters with `nativeContinuation`. */
  forgetSession?(sessionId: string): Promise<void>;
}
