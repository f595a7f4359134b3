/**
 * `anthropic`: the Messages API (`POST messages`, streamed). Content blocks are rebuilt
 * from the events (fragmented tool input included) and replayed verbatim on the next
 * step, so thinking signatures survive the tool loop.
 */
import { DriverError } from '../../protocol/errors.js';
import type { ProviderMessage, ProviderPart, ProviderRequest, ToolCall } from '../contract/v1.js';
import { defineProviderKind } from '../registry.js';
import { ApiProvider, type ApiDialect } from './api-provider.js';
import { apiProviderConfig } from './config.js';
import { count, finishStep, isObject, toolArguments, userContent, usageOf } from './shared.js';
import { incomplete, invalid, parseJson, type StreamParser } from './transport.js';

export const AnthropicProviderConfig = apiProviderConfig('anthropic', 'AnthropicProviderConfig', false);

interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: unknown[];
}

function messages(list: ProviderMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const push = (role: AnthropicMessage['role'], blocks: unknown[]) => {
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of list) {
    if (message.role === 'tool') push('user', [{ type: 'tool_result', tool_use_id: message.callId, content: message.content }]);
    else if (message.role === 'assistant') push('assistant', Array.isArray(message.native) ? message.native : [{ type: 'text', text: message.content }]);
    else {
      const { text, media } = userContent(message.content, message.context);
      push('user', [
        { type: 'text', text },
        ...media.flatMap((item) => [
          { type: 'text', text: item.label },
          { type: item.mediaType === 'application/pdf' ? 'document' : 'image', source: { type: 'base64', media_type: item.mediaType, data: item.data } },
        ]),
      ]);
    }
  }
  return out;
}

/** Messages requires max_tokens; sent when neither the run nor the host set a limit (docs/providers.md). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

export function messagesBody(request: ProviderRequest): Record<string, unknown> {
  return {
    model: request.model,
    stream: true,
    max_tokens: request.maxOutputTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    ...(request.instructions ? { system: request.instructions } : {}),
    messages: messages(request.messages),
    ...(request.tools.length > 0 ? { tools: request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema })) } : {}),
    ...(request.outputSchema ? { output_config: { format: { type: 'json_schema', schema: request.outputSchema } } } : {}),
  };
}

interface OpenBlock {
  block: Record<string, any>;
  json: string;
}

/** Rebuilds the message from Messages SSE events, enforcing the event order. */
export function parseMessages(): StreamParser {
  const blocks: Record<string, any>[] = [];
  let open: OpenBlock | undefined;
  let started = false;
  let stopReason: string | undefined;
  let usage: Record<string, unknown> = {};
  // Streamed tool input by block index, parsed once the stop reason is known (a cut one is truncation, not garbage).
  const toolJson = new Map<number, string>();
  return {
    read(events, parts) {
      for (const { data } of events) {
        const payload = parseJson(data);
        if (!isObject(payload) || typeof payload.type !== 'string') throw invalid('Anthropic sent an event without a type.');
        switch (payload.type) {
          case 'ping':
            break;
          case 'error':
            throw new DriverError('PROVIDER_FAILED', 'Anthropic reported a failure while generating the message.');
          case 'message_start':
            if (started || !isObject(payload.message)) throw invalid('Anthropic sent an unexpected message_start.');
            started = true;
            usage = { ...payload.message.usage };
            break;
          case 'content_block_start': {
            if (!started || open || payload.index !== blocks.length || !isObject(payload.content_block)) throw invalid('Anthropic opened a content block out of order.');
            const block = structuredClone(payload.content_block);
            open = { block, json: '' };
            if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') parts.push({ type: 'text-delta', text: block.text });
            break;
          }
          case 'content_block_delta': {
            if (!open || payload.index !== blocks.length || !isObject(payload.delta)) throw invalid('Anthropic sent a delta for a block that is not open.');
            const { delta } = payload;
            const { block } = open;
            if (delta.type === 'text_delta' && typeof delta.text === 'string') {
              block.text = (block.text ?? '') + delta.text;
              parts.push({ type: 'text-delta', text: delta.text });
            } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
              open.json += delta.partial_json;
              parts.push({ type: 'progress' });
            } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
              block.thinking = (block.thinking ?? '') + delta.thinking;
              parts.push({ type: 'progress' });
            } else if (delta.type === 'signature_delta' && typeof delta.signature === 'string') {
              block.signature = (block.signature ?? '') + delta.signature;
            } else if (delta.type === 'citations_delta') {
              block.citations = [...(block.citations ?? []), delta.citation];
            } else throw invalid('Anthropic sent an unknown content delta.');
            break;
          }
          case 'content_block_stop':
            if (!open || payload.index !== blocks.length) throw invalid('Anthropic closed a block that is not open.');
            if (open.block.type === 'tool_use' && open.json !== '') toolJson.set(blocks.length, open.json);
            blocks.push(open.block);
            open = undefined;
            break;
          case 'message_delta':
            if (!started || open) throw invalid('Anthropic sent message_delta with a block still open.');
            if (typeof payload.delta?.stop_reason === 'string') stopReason = payload.delta.stop_reason;
            usage = { ...usage, ...Object.fromEntries(Object.entries(payload.usage ?? {}).filter(([, v]) => v !== null)) };
            break;
          case 'message_stop':
            if (!started || open || stopReason === undefined) throw incomplete('Anthropic stopped the message without a stop reason.');
            parts.push(...finalize(blocks, toolJson, stopReason, usage));
            return true;
          default:
            break;
        }
      }
      return false;
    },
    end() {
      throw incomplete('The Anthropic stream ended before message_stop.');
    },
  };
}

function* finalize(blocks: Record<string, any>[], toolJson: Map<number, string>, stopReason: string, usage: Record<string, unknown>): Generator<ProviderPart> {
  if (stopReason === 'refusal') throw new DriverError('PROVIDER_REFUSAL', 'The model refused to answer.');
  if (!['end_turn', 'stop_sequence', 'tool_use', 'max_tokens', 'pause_turn'].includes(stopReason)) {
    throw new DriverError('PROVIDER_FAILED', `Anthropic stopped with ${stopReason}.`);
  }
  const lengthHit = stopReason === 'max_tokens';
  if (!lengthHit) {
    for (const [index, json] of toolJson) {
      try {
        blocks[index]!.input = JSON.parse(json);
      } catch {
        throw invalid('Anthropic sent tool input that is not JSON.');
      }
    }
  }
  const calls: ToolCall[] = blocks
    .filter((block) => block.type === 'tool_use')
    .map((block) => {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalid('Anthropic sent a tool_use block without id or name.');
      return { id: block.id, name: block.name, arguments: lengthHit ? {} : toolArguments(block.input ?? {}, block.name) };
    });
  const input = count(usage.input_tokens);
  const read = count(usage.cache_read_input_tokens);
  const created = count(usage.cache_creation_input_tokens);
  const allKnown = input !== undefined && read !== undefined && created !== undefined;
  yield* finishStep(
    calls,
    lengthHit,
    usageOf({ inputTokens: allKnown ? input + read + created : undefined, outputTokens: count(usage.output_tokens), cachedInputTokens: read }),
    blocks,
  );
}

export const anthropicDialect: ApiDialect = {
  vendor: 'anthropic',
  defaultName: 'Anthropic',
  defaultBaseUrl: 'https://api.anthropic.com/v1/',
  mediaTypes: ['image/png', 'image/jpeg', 'image/webp', 'application/pdf'],
  // Opaque native state is replayed between the steps of one run; sessions replay their history.
  capabilities: { nativeContinuation: false },
  authHeaders: (key) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' }),
  generation: (request, base) => ({ url: new URL('messages', base), body: messagesBody(request) }),
  parser: parseMessages,
  modelsPage: (base, cursor) => {
    const url = new URL('models', base);
    url.searchParams.set('limit', '100');
    if (cursor !== undefined) url.searchParams.set('after_id', cursor);
    return url;
  },
  readModels: (body) => {
    if (!isObject(body) || !Array.isArray(body.data)) throw invalid('Malformed model list.');
    const ids = body.data.map((row: any) => row?.id).filter((id: unknown): id is string => typeof id === 'string' && id !== '');
    if (body.has_more === true && typeof body.last_id !== 'string') throw invalid('Malformed model list.');
    return { ids, next: body.has_more === true ? body.last_id : undefined };
  },
};

export const anthropicKind = defineProviderKind({
  kind: 'anthropic',
  configSchema: AnthropicProviderConfig,
  create: (entry, env) => new ApiProvider(anthropicDialect, entry, env),
});
