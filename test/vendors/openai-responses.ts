/**
 * OpenAI Responses API fake: `POST {base}responses` streamed as named SSE events
 * (`response.created` … `response.completed` / `response.incomplete`), `GET {base}models`.
 * Auth: `Authorization: Bearer <key>`.
 */
import { startVendorServer, type Dialect, type VendorServer, type VendorServerOptions } from './server.js';
import { argumentText, fragments, textChunks, type Frame, type Turn, type VendorErrorSpec } from './script.js';

export function openAIErrorBody(spec: VendorErrorSpec): unknown {
  const type = spec.status === 401 ? 'invalid_request_error' : spec.status === 429 ? 'rate_limit_exceeded' : spec.status >= 500 ? 'server_error' : 'invalid_request_error';
  const code = spec.status === 401 ? 'invalid_api_key' : spec.status === 429 ? 'rate_limit_exceeded' : null;
  return { error: { message: spec.message ?? `Scripted HTTP ${spec.status}.`, type, param: null, code } };
}

export const bearerKey = (header: string | string[] | undefined): string | undefined =>
  typeof header === 'string' && header.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;

/** `GET models` in the OpenAI list shape (one page). */
export const openAIModelList = (models: string[]) => ({
  status: 200,
  body: { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })) },
});

export function renderResponses(turn: Turn, model: string): Frame[] {
  let sequence = 0;
  const frames: Frame[] = [];
  const emit = (type: string, fields: Record<string, unknown>) => frames.push({ event: type, data: { type, sequence_number: sequence++, ...fields } });
  const base = { id: 'resp_fake_1', object: 'response', created_at: 1_700_000_000, model, instructions: null, tools: [], store: false };
  emit('response.created', { response: { ...base, status: 'in_progress', output: [], usage: null } });
  emit('response.in_progress', { response: { ...base, status: 'in_progress', output: [], usage: null } });

  const output: Record<string, unknown>[] = [];
  const add = (item: Record<string, unknown>, stream: (index: number) => void, done: Record<string, unknown>) => {
    const index = output.length;
    emit('response.output_item.added', { output_index: index, item });
    stream(index);
    emit('response.output_item.done', { output_index: index, item: done });
    output.push(done);
  };

  if (turn.reasoning !== undefined) {
    const id = 'rs_fake_1';
    const summary = [{ type: 'summary_text', text: turn.reasoning }];
    add(
      { id, type: 'reasoning', summary: [] },
      (index) => {
        emit('response.reasoning_summary_part.added', { item_id: id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
        emit('response.reasoning_summary_text.delta', { item_id: id, output_index: index, summary_index: 0, delta: turn.reasoning });
        emit('response.reasoning_summary_text.done', { item_id: id, output_index: index, summary_index: 0, text: turn.reasoning });
        emit('response.reasoning_summary_part.done', { item_id: id, output_index: index, summary_index: 0, part: summary[0] });
      },
      { id, type: 'reasoning', summary, encrypted_content: 'opaque-reasoning-state' },
    );
  }

  const chunks = textChunks(turn);
  if (chunks.length > 0 || turn.refusal !== undefined) {
    const id = 'msg_fake_1';
    const text = chunks.join('');
    const parts: Record<string, unknown>[] = [];
    add(
      { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      (index) => {
        let contentIndex = 0;
        if (chunks.length > 0) {
          const part = { type: 'output_text', text, annotations: [] };
          emit('response.content_part.added', { item_id: id, output_index: index, content_index: contentIndex, part: { ...part, text: '' } });
          for (const delta of chunks) emit('response.output_text.delta', { item_id: id, output_index: index, content_index: contentIndex, delta, logprobs: [] });
          emit('response.output_text.done', { item_id: id, output_index: index, content_index: contentIndex, text, logprobs: [] });
          emit('response.content_part.done', { item_id: id, output_index: index, content_index: contentIndex, part });
          parts.push(part);
          contentIndex += 1;
        }
        if (turn.refusal !== undefined) {
          const part = { type: 'refusal', refusal: turn.refusal };
          emit('response.content_part.added', { item_id: id, output_index: index, content_index: contentIndex, part: { ...part, refusal: '' } });
          emit('response.refusal.delta', { item_id: id, output_index: index, content_index: contentIndex, delta: turn.refusal });
          emit('response.refusal.done', { item_id: id, output_index: index, content_index: contentIndex, refusal: turn.refusal });
          emit('response.content_part.done', { item_id: id, output_index: index, content_index: contentIndex, part });
          parts.push(part);
        }
      },
      { id, type: 'message', status: 'completed', role: 'assistant', content: parts },
    );
  }

  (turn.toolCalls ?? []).forEach((call, n) => {
    const id = `fc_fake_${n + 1}`;
    const callId = call.id ?? `call_fake_${n + 1}`;
    const args = argumentText(call);
    const namespace = call.namespace === undefined ? {} : { namespace: call.namespace };
    if (call.freeform) {
      const input = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      add(
        { id, type: 'custom_tool_call', status: 'in_progress', call_id: callId, name: call.name, input: '' },
        (index) => {
          for (const delta of fragments(input, call.fragments)) emit('response.custom_tool_call_input.delta', { item_id: id, output_index: index, delta });
          emit('response.custom_tool_call_input.done', { item_id: id, output_index: index, input });
        },
        { id, type: 'custom_tool_call', status: 'completed', call_id: callId, name: call.name, input },
      );
      return;
    }
    add(
      { id, type: 'function_call', status: 'in_progress', call_id: callId, name: call.name, ...namespace, arguments: '' },
      (index) => {
        for (const delta of fragments(args, call.fragments)) emit('response.function_call_arguments.delta', { item_id: id, output_index: index, delta });
        emit('response.function_call_arguments.done', { item_id: id, output_index: index, arguments: args });
      },
      { id, type: 'function_call', status: 'completed', call_id: callId, name: call.name, ...namespace, arguments: args },
    );
  });

  const u = turn.usage ?? {};
  const usage = {
    input_tokens: u.input ?? 0,
    input_tokens_details: { cached_tokens: u.cached ?? 0 },
    output_tokens: u.output ?? 0,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: (u.input ?? 0) + (u.output ?? 0),
  };
  if (turn.finish === 'length') {
    emit('response.incomplete', { response: { ...base, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output, usage } });
  } else {
    emit('response.completed', { response: { ...base, status: 'completed', incomplete_details: null, output, usage } });
  }
  return frames;
}

export const openAIResponsesDialect: Dialect = {
  name: 'openai-responses',
  prefix: '/v1/',
  isGeneration: (method, path) => method === 'POST' && path.endsWith('/responses'),
  isModelListing: (method, path) => method === 'GET' && path.endsWith('/models'),
  apiKeyOf: (req) => bearerKey(req.headers.authorization),
  render: (turn, request) => renderResponses(turn, String(request.body?.model ?? 'unknown')),
  errorBody: openAIErrorBody,
  listModels: (models) => openAIModelList(models),
};

export const startOpenAIResponsesServer = (options: VendorServerOptions = {}): Promise<VendorServer> => startVendorServer(openAIResponsesDialect, options);
