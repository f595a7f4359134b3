/**
 * Anthropic Messages API fake: `POST {base}messages` streamed as named SSE events
 * (`message_start`, `content_block_*`, `message_delta`, `message_stop`, `ping`),
 * `GET {base}models` paged by `after_id`. Auth: `x-api-key` (or a bearer token).
 */
import { startVendorServer, type Dialect, type VendorServer, type VendorServerOptions } from './server.js';
import { bearerKey } from './openai-responses.js';
import { argumentText, fragments, textChunks, type Frame, type Turn, type VendorErrorSpec } from './script.js';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export const anthropicErrorBody = (spec: VendorErrorSpec) => ({
  type: 'error',
  error: { type: ERROR_TYPES[spec.status] ?? 'api_error', message: spec.message ?? `Scripted HTTP ${spec.status}.` },
  request_id: 'req_fake_1',
});

export function renderMessages(turn: Turn, model: string): Frame[] {
  const frames: Frame[] = [];
  const emit = (type: string, fields: Record<string, unknown> = {}) => frames.push({ event: type, data: { type, ...fields } });
  const u = turn.usage ?? {};
  emit('message_start', {
    message: {
      id: 'msg_fake_1',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: u.input ?? 0,
        cache_creation_input_tokens: u.cacheCreation ?? 0,
        cache_read_input_tokens: u.cached ?? 0,
        output_tokens: 1,
      },
    },
  });
  if (turn.pings) emit('ping');
  let index = 0;
  const block = (start: Record<string, unknown>, deltas: Record<string, unknown>[]) => {
    emit('content_block_start', { index, content_block: start });
    for (const delta of deltas) {
      emit('content_block_delta', { index, delta });
      if (turn.pings) emit('ping');
    }
    emit('content_block_stop', { index });
    index += 1;
  };
  if (turn.reasoning !== undefined) {
    block({ type: 'thinking', thinking: '', signature: '' }, [
      { type: 'thinking_delta', thinking: turn.reasoning },
      { type: 'signature_delta', signature: 'opaque-signature' },
    ]);
  }
  const chunks = textChunks(turn);
  if (chunks.length > 0) block({ type: 'text', text: '' }, chunks.map((text) => ({ type: 'text_delta', text })));
  (turn.toolCalls ?? []).forEach((call, n) => {
    block(
      { type: 'tool_use', id: call.id ?? `toolu_fake_${n + 1}`, name: call.name, input: {} },
      fragments(argumentText(call), call.fragments).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    );
  });
  const stopReason =
    turn.refusal !== undefined ? 'refusal' : turn.finish === 'length' ? 'max_tokens' : (turn.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn';
  emit('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: u.output ?? 0 } });
  emit('message_stop');
  return frames;
}

export const anthropicMessagesDialect: Dialect = {
  name: 'anthropic-messages',
  prefix: '/v1/',
  isGeneration: (method, path) => method === 'POST' && path.endsWith('/messages'),
  isModelListing: (method, path) => method === 'GET' && path.endsWith('/models'),
  // The API takes `x-api-key`; newer official SDKs send the same key as a bearer token.
  apiKeyOf: (req) => (typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'] : bearerKey(req.headers.authorization)),
  render: (turn, request) => renderMessages(turn, String(request.body?.model ?? 'unknown')),
  errorBody: anthropicErrorBody,
  listModels: (models, url) => {
    const limit = Number(url.searchParams.get('limit') ?? 20);
    const after = url.searchParams.get('after_id');
    const start = after === null ? 0 : models.indexOf(after) + 1;
    const page = models.slice(start, start + limit);
    return {
      status: 200,
      body: {
        data: page.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })),
        has_more: start + limit < models.length,
        first_id: page[0] ?? null,
        last_id: page.at(-1) ?? null,
      },
    };
  },
};

export const startAnthropicMessagesServer = (options: VendorServerOptions = {}): Promise<VendorServer> => startVendorServer(anthropicMessagesDialect, options);
