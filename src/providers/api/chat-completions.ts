/**
 * `xai` and `openai-compatible`: Chat Completions (`POST chat/completions`, streamed with
 * `stream_options.include_usage`). Tool-call fragments are reassembled by index; the
 * stream must end with a finish reason and `[DONE]`.
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderMessage, ProviderPart, ProviderRequest, ToolCall } from '../contract/v1.js';
import { defineProviderKind } from '../registry.js';
import { ApiProvider, type ApiDialect } from './api-provider.js';
import { apiProviderConfig } from './config.js';
import { bearer, readOpenAIModels } from './openai.js';
import { count, finishStep, isObject, toolArguments, userContent, usageOf } from './shared.js';
import { incomplete, invalid, parseJson, type StreamParser } from './transport.js';

const MAX_TOOL_CALLS = 32;

export const XaiProviderConfig = apiProviderConfig('xai', 'XaiProviderConfig', false);
export const OpenAICompatibleProviderConfig = apiProviderConfig('openai-compatible', 'OpenAICompatibleProviderConfig', true);

function messages(request: ProviderRequest): unknown[] {
  const out: unknown[] = request.instructions ? [{ role: 'system', content: request.instructions }] : [];
  for (const message of request.messages as ProviderMessage[]) {
    if (message.role === 'tool') out.push({ role: 'tool', tool_call_id: message.callId, content: message.content });
    else if (message.role === 'assistant') out.push(isObject(message.native) ? message.native : { role: 'assistant', content: message.content });
    else {
      const { text, media } = userContent(message.content, message.context);
      out.push({
        role: 'user',
        content:
          media.length === 0
            ? text
            : [
                { type: 'text', text },
                ...media.flatMap((item) => [
                  { type: 'text', text: item.label },
                  { type: 'image_url', image_url: { url: `data:${item.mediaType};base64,${item.data}` } },
                ]),
              ],
      });
    }
  }
  return out;
}

export function chatBody(request: ProviderRequest): Record<string, unknown> {
  return {
    model: request.model,
    stream: true,
    stream_options: { include_usage: true },
    messages: messages(request),
    // Only when the run or the host set a limit: a server's own default may be far larger (reasoning models).
    ...(request.maxOutputTokens !== undefined ? { max_tokens: request.maxOutputTokens } : {}),
    ...(request.tools.length > 0
      ? { tools: request.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } })) }
      : {}),
    ...(request.outputSchema ? { response_format: { type: 'json_schema', json_schema: { name: 'output', schema: request.outputSchema, strict: false } } } : {}),
  };
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
}

/** Folds Chat Completions chunks: text deltas stream out; tool calls and usage are assembled for the finish. */
export function parseChatCompletion(): StreamParser {
  let text = '';
  let refusal = '';
  let finishReason: string | undefined;
  let usage: Record<string, any> | undefined;
  const calls: PendingCall[] = [];
  return {
    read(events, parts) {
      for (const { data } of events) {
        if (data === '[DONE]') {
          if (finishReason === undefined) throw incomplete('The stream ended with [DONE] but no finish reason.');
          parts.push(...finalize(text, refusal, finishReason, calls, usage));
          return true;
        }
        const chunk = parseJson(data);
        if (!isObject(chunk)) throw invalid('The provider sent a chunk that is not an object.');
        if (chunk.error !== undefined) throw new DriverError('PROVIDER_FAILED', 'The provider reported a failure while generating the response.');
        if (isObject(chunk.usage)) usage = chunk.usage;
        const choices = chunk.choices ?? [];
        if (!Array.isArray(choices) || choices.length > 1) throw invalid('The provider sent more than one choice.');
        const choice = choices[0];
        if (choice === undefined) continue;
        if (!isObject(choice)) throw invalid('The provider sent a malformed choice.');
        const delta = isObject(choice.delta) ? choice.delta : {};
        if (typeof delta.content === 'string' && delta.content !== '') {
          text += delta.content;
          parts.push({ type: 'text-delta', text: delta.content });
        }
        for (const field of ['reasoning_content', 'reasoning'] as const) {
          if (typeof delta[field] === 'string' && delta[field] !== '') parts.push({ type: 'progress' });
        }
        if (typeof delta.refusal === 'string') refusal += delta.refusal;
        for (const fragment of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
          const index = fragment?.index;
          if (!Number.isInteger(index) || index < 0 || index > calls.length || index >= MAX_TOOL_CALLS) throw invalid('The provider sent a tool-call fragment with a bad index.');
          const call = (calls[index] ??= { id: '', name: '', arguments: '' });
          if (typeof fragment.id === 'string') call.id += fragment.id;
          if (typeof fragment.function?.name === 'string') call.name += fragment.function.name;
          if (typeof fragment.function?.arguments === 'string') call.arguments += fragment.function.arguments;
          parts.push({ type: 'progress' });
        }
        if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
      }
      return false;
    },
    end() {
      throw incomplete('The stream ended without [DONE].');
    },
  };
}

function* finalize(text: string, refusal: string, finishReason: string, pending: PendingCall[], usage: Record<string, any> | undefined): Generator<ProviderPart> {
  if (refusal !== '' || finishReason === 'content_filter') throw new DriverError('PROVIDER_REFUSAL', 'The model refused to answer.');
  if (!['stop', 'tool_calls', 'length'].includes(finishReason)) throw new DriverError('PROVIDER_FAILED', `The provider stopped with ${finishReason}.`);
  const lengthHit = finishReason === 'length';
  const calls: ToolCall[] = pending.map((call) => {
    if (call.id === '' || call.name === '') throw invalid('The provider sent a tool call without id or name.');
    return { id: call.id, name: call.name, arguments: lengthHit ? {} : toolArguments(call.arguments, call.name) };
  });
  const native = {
    role: 'assistant',
    content: text === '' && calls.length > 0 ? null : text,
    ...(pending.length > 0 ? { tool_calls: pending.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) } : {}),
  };
  yield* finishStep(
    calls,
    lengthHit,
    usage
      ? usageOf({
          inputTokens: count(usage.prompt_tokens),
          outputTokens: count(usage.completion_tokens),
          cachedInputTokens: count(usage.prompt_tokens_details?.cached_tokens),
          reasoningTokens: count(usage.completion_tokens_details?.reasoning_tokens),
        })
      : undefined,
    native,
  );
}

const chatDialect = (vendor: string, defaultName: string, defaultBaseUrl: string | undefined): ApiDialect => ({
  vendor,
  defaultName,
  ...(defaultBaseUrl ? { defaultBaseUrl } : {}),
  mediaTypes: ['image/png', 'image/jpeg', 'image/webp'],
  capabilities: { nativeContinuation: false },
  authHeaders: bearer,
  generation: (request, base) => ({ url: new URL('chat/completions', base), body: chatBody(request) }),
  parser: parseChatCompletion,
  modelsPage: (base) => new URL('models', base),
  readModels: readOpenAIModels,
});

export const xaiDialect = chatDialect('xai', 'xAI Grok API', 'https://api.x.ai/v1/');
export const openAICompatibleDialect = chatDialect('openai-compatible', 'OpenAI-compatible API', undefined);

export const xaiKind = defineProviderKind({
  kind: 'xai',
  configSchema: XaiProviderConfig,
  create: (entry, env) => new ApiProvider(xaiDialect, entry, env),
});

export const openAICompatibleKind = defineProviderKind({
  kind: 'openai-compatible',
  configSchema: OpenAICompatibleProviderConfig,
  create: (entry, env) => new ApiProvider(openAICompatibleDialect, entry, env),
});
