/**
 * `openai`: the OpenAI Responses API (`POST responses`, streamed, `store: false`). The
 * step's output items are replayed verbatim on the next step (encrypted reasoning
 * included), so no server-side state is used.
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderMessage, ProviderPart, ProviderRequest, ToolCall } from '../contract/v1.js';
import { defineProviderKind } from '../registry.js';
import { ApiProvider, type ApiDialect } from './api-provider.js';
import { apiProviderConfig } from './config.js';
import { count, finishStep, isObject, toolArguments, userContent, usageOf } from './shared.js';
import { incomplete, invalid, parseJson, type StreamParser } from './transport.js';

export const OpenAIProviderConfig = apiProviderConfig('openai', 'OpenAIProviderConfig', false);

function input(messages: ProviderMessage[]): unknown[] {
  return messages.flatMap((message): unknown[] => {
    if (message.role === 'tool') return [{ type: 'function_call_output', call_id: message.callId, output: message.content }];
    if (message.role === 'assistant') {
      if (Array.isArray(message.native)) return message.native;
      return [{ role: 'assistant', content: message.content }];
    }
    const { text, media } = userContent(message.content, message.context);
    if (media.length === 0) return [{ role: 'user', content: text }];
    return [
      {
        role: 'user',
        content: [
          { type: 'input_text', text },
          ...media.flatMap((item) => [
            { type: 'input_text', text: item.label },
            item.mediaType === 'application/pdf'
              ? { type: 'input_file', filename: `${item.label}.pdf`, file_data: `data:application/pdf;base64,${item.data}` }
              : { type: 'input_image', image_url: `data:${item.mediaType};base64,${item.data}` },
          ]),
        ],
      },
    ];
  });
}

export function responsesBody(request: ProviderRequest): Record<string, unknown> {
  return {
    model: request.model,
    ...(request.instructions ? { instructions: request.instructions } : {}),
    input: input(request.messages),
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    ...(request.maxOutputTokens !== undefined ? { max_output_tokens: request.maxOutputTokens } : {}),
    ...(request.tools.length > 0
      ? { tools: request.tools.map((tool) => ({ type: 'function', name: tool.name, description: tool.description, parameters: tool.inputSchema, strict: false })) }
      : {}),
    ...(request.outputSchema ? { text: { format: { type: 'json_schema', name: 'output', schema: request.outputSchema, strict: false } } } : {}),
  };
}

/** Folds Responses SSE events: text deltas stream out; the final `response` object decides the rest. */
export function parseResponses(): StreamParser {
  return {
    read(events, parts) {
      for (const { event, data } of events) {
        if (data === '[DONE]') continue;
        const payload = parseJson(data);
        const type = isObject(payload) && typeof payload.type === 'string' ? payload.type : event;
        if (type === 'error' || type === 'response.failed') {
          throw new DriverError('PROVIDER_FAILED', 'OpenAI reported a failure while generating the response.');
        }
        if (type === 'response.output_text.delta') {
          if (typeof payload.delta !== 'string') throw invalid('OpenAI sent a text delta without text.');
          parts.push({ type: 'text-delta', text: payload.delta });
        } else if (type === 'response.completed' || type === 'response.incomplete') {
          parts.push(...finalize(payload.response));
          return true;
        } else if (typeof type === 'string' && (type.endsWith('.delta') || type.startsWith('response.output_item.') || type.startsWith('response.content_part.'))) {
          parts.push({ type: 'progress' });
        }
      }
      return false;
    },
    end() {
      throw incomplete('The OpenAI stream ended before response.completed.');
    },
  };
}

function* finalize(response: unknown): Generator<ProviderPart> {
  if (!isObject(response) || !Array.isArray(response.output)) throw invalid('OpenAI sent a final response without output.');
  const lengthHit = response.status === 'incomplete' && response.incomplete_details?.reason === 'max_output_tokens';
  if (response.status !== 'completed' && !lengthHit) throw new DriverError('PROVIDER_FAILED', `OpenAI ended the response with status ${String(response.status)}.`);
  const calls: ToolCall[] = [];
  for (const item of response.output as unknown[]) {
    if (!isObject(item)) throw invalid('OpenAI sent a malformed output item.');
    if (item.type === 'message') {
      if (!Array.isArray(item.content)) throw invalid('OpenAI sent a message item without content.');
      if (item.content.some((part: any) => part?.type === 'refusal')) throw new DriverError('PROVIDER_REFUSAL', 'The model refused to answer.');
    } else if (item.type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string') throw invalid('OpenAI sent a function call without call_id or name.');
      calls.push({ id: item.call_id, name: item.name, arguments: lengthHit ? {} : toolArguments(item.arguments, item.name) });
    }
  }
  const usage = isObject(response.usage)
    ? usageOf({
        inputTokens: count(response.usage.input_tokens),
        outputTokens: count(response.usage.output_tokens),
        cachedInputTokens: count(response.usage.input_tokens_details?.cached_tokens),
        reasoningTokens: count(response.usage.output_tokens_details?.reasoning_tokens),
      })
    : undefined;
  yield* finishStep(calls, lengthHit, usage, response.output);
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** One page of the OpenAI-style `GET models` list (`data[].id`). */
export function readOpenAIModels(body: any): { ids: string[]; next: undefined } {
  if (!isObject(body) || !Array.isArray(body.data) || body.data.length > 10_000) throw invalid('Malformed model list.');
  return { ids: body.data.map((row: any) => row?.id).filter((id: unknown): id is string => typeof id === 'string' && id !== ''), next: undefined };
}

export const openaiDialect: ApiDialect = {
  vendor: 'openai',
  defaultName: 'OpenAI',
  defaultBaseUrl: 'https://api.openai.com/v1/',
  mediaTypes: ['image/png', 'image/jpeg', 'image/webp', 'application/pdf'],
  // Opaque native state is replayed between the steps of one run; sessions replay their history.
  capabilities: { nativeContinuation: false },
  authHeaders: bearer,
  generation: (request, base) => ({ url: new URL('responses', base), body: responsesBody(request) }),
  parser: parseResponses,
  modelsPage: (base) => new URL('models', base),
  readModels: readOpenAIModels,
};

export const openaiKind = defineProviderKind({
  kind: 'openai',
  configSchema: OpenAIProviderConfig,
  create: (entry, env) => new ApiProvider(openaiDialect, entry, env),
});
