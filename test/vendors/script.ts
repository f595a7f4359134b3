/**
 * The vendor-neutral script language of the loopback vendor servers. A script is a queue
 * of steps; each generation request the server receives consumes the next step.
 */

/** One tool call of a scripted model turn. */
export interface TurnToolCall {
  id?: string;
  name: string;
  /** A JSON object, or a raw string sent verbatim (use it to script malformed arguments). */
  arguments: Record<string, unknown> | string;
  /** How many pieces the argument JSON is split into on vendors that stream it (default 3). */
  fragments?: number;
  /** OpenAI Responses only: the namespace of a namespaced tool (Codex serves MCP tools that way). */
  namespace?: string;
  /** OpenAI Responses only: a freeform (`custom`) tool call whose input is `arguments` verbatim (Codex's `apply_patch`). */
  freeform?: boolean;
}

export interface TurnUsage {
  input?: number;
  output?: number;
  /** Input tokens served from cache (Anthropic: cache reads). */
  cached?: number;
  /** Anthropic only: input tokens written to the cache. */
  cacheCreation?: number;
  reasoning?: number;
}

/** A high-level model turn; each dialect renders it in its exact wire format. */
export interface Turn {
  /** Visible text; an array is streamed as those deltas. */
  text?: string | string[];
  /** Reasoning/thinking text (streamed as the vendor's reasoning events where it has them). */
  reasoning?: string;
  toolCalls?: TurnToolCall[];
  /** A refusal in the vendor's refusal shape (OpenAI/Chat: refusal content; Anthropic: stop_reason refusal; Gemini: SAFETY). */
  refusal?: string;
  usage?: TurnUsage;
  /** `length`: the output limit was reached. Default: stop (or the tool-use stop when there are tool calls). */
  finish?: 'stop' | 'length';
  /** Anthropic: interleave `ping` events. */
  pings?: boolean;
}

/** One SSE event. String `data` is written verbatim; anything else as JSON. */
export interface SseFrame {
  event?: string;
  data: unknown;
}
/** Bytes written verbatim (garbage, comments, oversized lines). */
export interface RawFrame {
  raw: string;
}
export type Frame = SseFrame | RawFrame;

/** What happens after the frames of a streamed step are written. */
export type StreamEnd = 'end' | 'reset' | 'hang';

export interface StreamShape {
  /** Send only the first N frames, then apply `then` (default `end`). */
  cutAfter?: number;
  then?: StreamEnd;
  /** Pause between frames (default 0). */
  frameDelayMs?: number;
  /** Write the body in pieces of this many bytes (splits frames and UTF-8 sequences). */
  chunkBytes?: number;
}

export interface VendorErrorSpec {
  status: number;
  message?: string;
  /** Verbatim `Retry-After` header value. */
  retryAfter?: string;
}

export type Step =
  /** A model turn in the dialect's stream format. */
  | ({ turn: Turn } & StreamShape)
  /** Explicit frames, for malformed streams. */
  | ({ frames: Frame[]; contentType?: string } & StreamShape)
  /** A vendor-shaped HTTP error body with the given status. */
  | { error: VendorErrorSpec }
  /** Any HTTP response, verbatim. */
  | { http: { status: number; headers?: Record<string, string>; body?: string } }
  /** Accept the request and never answer; the server records the client's abort. */
  | { hang: true }
  /** Destroy the connection without any response. */
  | { reset: true };

/** Splits a string into `count` non-empty pieces (fewer when it is shorter). */
export function fragments(text: string, count = 3): string[] {
  if (text === '') return [''];
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, count)));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

export const textChunks = (turn: Turn): string[] => (turn.text === undefined ? [] : Array.isArray(turn.text) ? turn.text : [turn.text]);

export const argumentText = (call: TurnToolCall): string => (typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments));
