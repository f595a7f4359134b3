/** Shared setup for the API provider tests: one loopback vendor fake per kind, adapters built through their kinds. */
import { join } from 'node:path';
import { readSecret } from '../../../src/shared/secrets.js';
import { providerKind } from '../../../src/providers/kinds.js';
import { AgenticDriver } from '../../../src/runtime/driver.js';
import type { ProviderAdapter } from '../../../src/providers/spec/v1.js';
import type { HostTool } from '../../../src/runtime/tools.js';
import {
  anthropicMessagesDialect,
  chatCompletionsDialect,
  geminiDialect,
  openAIResponsesDialect,
  startAnthropicMessagesServer,
  startChatCompletionsServer,
  startGeminiServer,
  startOpenAIResponsesServer,
  type Dialect,
  type Turn,
  type VendorServer,
  type VendorServerOptions,
} from '../../vendors/index.js';
import { tempDir } from '../../support/temp.js';

export const KEY = 'sk-test-secret-4f9a1c';
export const MODEL = 'model-1';

type Body = any;

export interface KindCase {
  kind: string;
  dialect: Dialect;
  start(options: VendorServerOptions): Promise<VendorServer>;
  keyOf(headers: Record<string, unknown>): unknown;
  /** `[callId, output]` of every tool result in a request body, in the vendor's format. */
  toolResults(body: Body): [string, string][];
  /** Call ids of the previous step's tool calls, replayed in a request body. */
  replayedCalls(body: Body): string[];
  schemaOf(body: Body): unknown;
  /** The output-token limit in a request body, in the vendor's field. */
  maxTokensOf(body: Body): unknown;
  /** Usage the runtime reports for HONESTY_TURNS.text's usage {input 12, output 5, cached 4, reasoning 2}. */
  textUsage: Record<string, number>;
}

const bearerOf = (headers: Record<string, unknown>) => String(headers.authorization ?? '').replace(/^Bearer /, '');

const chatCase = (kind: string): KindCase => ({
  kind,
  dialect: chatCompletionsDialect,
  start: startChatCompletionsServer,
  keyOf: bearerOf,
  toolResults: (body) => body.messages.filter((m: Body) => m.role === 'tool').map((m: Body) => [m.tool_call_id, m.content]),
  replayedCalls: (body) => body.messages.flatMap((m: Body) => (m.tool_calls ?? []).map((c: Body) => c.id)),
  schemaOf: (body) => body.response_format?.json_schema?.schema,
  maxTokensOf: (body) => body.max_tokens,
  textUsage: { inputTokens: 12, outputTokens: 5, cachedInputTokens: 4, reasoningTokens: 2 },
});

export const KINDS: KindCase[] = [
  {
    kind: 'openai',
    dialect: openAIResponsesDialect,
    start: startOpenAIResponsesServer,
    keyOf: bearerOf,
    toolResults: (body) => body.input.filter((i: Body) => i.type === 'function_call_output').map((i: Body) => [i.call_id, i.output]),
    replayedCalls: (body) => body.input.filter((i: Body) => i.type === 'function_call').map((i: Body) => i.call_id),
    schemaOf: (body) => body.text?.format?.schema,
    maxTokensOf: (body) => body.max_output_tokens,
    textUsage: { inputTokens: 12, outputTokens: 5, cachedInputTokens: 4, reasoningTokens: 2 },
  },
  {
    kind: 'anthropic',
    dialect: anthropicMessagesDialect,
    start: startAnthropicMessagesServer,
    keyOf: (headers) => headers['x-api-key'],
    toolResults: (body) =>
      body.messages.flatMap((m: Body) => m.content).filter((b: Body) => b.type === 'tool_result').map((b: Body) => [b.tool_use_id, b.content]),
    replayedCalls: (body) => body.messages.flatMap((m: Body) => m.content).filter((b: Body) => b.type === 'tool_use').map((b: Body) => b.id),
    schemaOf: (body) => body.output_config?.format?.schema,
    maxTokensOf: (body) => body.max_tokens,
    // Anthropic input = uncached + cache reads + cache writes.
    textUsage: { inputTokens: 16, outputTokens: 5, cachedInputTokens: 4 },
  },
  {
    kind: 'gemini',
    dialect: geminiDialect,
    start: startGeminiServer,
    keyOf: (headers) => headers['x-goog-api-key'],
    toolResults: (body) =>
      body.contents
        .flatMap((c: Body) => c.parts)
        .filter((p: Body) => p.functionResponse)
        .map((p: Body) => [p.functionResponse.id, JSON.stringify(p.functionResponse.response.result)]),
    replayedCalls: (body) => body.contents.flatMap((c: Body) => c.parts).filter((p: Body) => p.functionCall).map((p: Body) => p.functionCall.id),
    schemaOf: (body) => body.generationConfig?.responseJsonSchema,
    maxTokensOf: (body) => body.generationConfig?.maxOutputTokens,
    textUsage: { inputTokens: 12, outputTokens: 5, cachedInputTokens: 4, reasoningTokens: 2 },
  },
  chatCase('xai'),
  chatCase('openai-compatible'),
];

export const lookupTool: HostTool = {
  name: 'lookup',
  description: 'Looks a city up.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, additionalProperties: false },
  execute: (input) => ({ found: input.city ?? null }),
};
export const clockTool: HostTool = {
  name: 'clock',
  description: 'Tells the time.',
  inputSchema: { type: 'object', additionalProperties: false },
  execute: () => ({ now: 'noon' }),
};

export interface Setup {
  server: VendorServer;
  adapter: ProviderAdapter;
  driver: AgenticDriver;
  /** The process-like environment the adapter reads its key from; mutate to rotate or remove it. */
  env: Record<string, string | undefined>;
  close(): Promise<void>;
}

export async function setup(kase: KindCase, options: VendorServerOptions = {}, entryOverrides: Record<string, unknown> = {}): Promise<Setup> {
  const server = await kase.start(options);
  const env: Record<string, string | undefined> = { PROVIDER_KEY: KEY };
  const dir = tempDir('ad-api-provider-');
  const entry = { kind: kase.kind, id: kase.kind, models: [MODEL], apiKeyRef: { env: 'PROVIDER_KEY' }, baseUrl: server.url, ...entryOverrides };
  const adapter = providerKind(kase.kind)!.create(entry as never, { configDir: dir, readSecret: (ref) => readSecret(ref, dir, env) });
  const driver = new AgenticDriver({ providers: [adapter], tools: [lookupTool, clockTool] });
  return { server, adapter, driver, env, close: () => server.close() };
}

export const runRequest = (kind: string, extra: Record<string, unknown> = {}) => ({ provider: kind, model: MODEL, input: 'Hi there', ...extra });

/** Runs to the end; returns the result or the thrown error's JSON. */
export async function outcome(driver: AgenticDriver, request: unknown): Promise<{ result?: any; error?: any; events: any[] }> {
  const events: any[] = [];
  try {
    for await (const event of driver.stream(request)) events.push(event);
  } catch (error) {
    return { error: (error as { toJSON(): unknown }).toJSON(), events };
  }
  const last = events.at(-1);
  return last.type === 'run.completed' ? { result: last.result, events } : { error: last.error, events };
}

/** How many frames of `turn`, in this kind's format, end with the first text delta `marker`. */
export function framesThroughText(kase: KindCase, turn: Turn, marker: string): number {
  const request = { body: { model: MODEL, stream_options: { include_usage: true } }, path: `/v1beta/models/${MODEL}:streamGenerateContent` } as never;
  const frames = kase.dialect.render(turn, request);
  return frames.findIndex((frame) => JSON.stringify(frame).includes(marker)) + 1;
}
