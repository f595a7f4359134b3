/**
 * Chat Completions fake (xAI, vLLM, llama.cpp server, Ollama, gateways): `POST
 * {base}chat/completions` streamed as unnamed `data:` chunks ending with `data: [DONE]`,
 * a trailing usage chunk (`stream_options.include_usage`), `GET {base}models`.
 */
import { startVendorServer, type Dialect, type VendorServer, type VendorServerOptions } from './server.js';
import { argumentText, fragments, textChunks, type Frame, type Turn } from './script.js';
import { bearerKey, openAIErrorBody, openAIModelList } from './openai-responses.js';

export function renderChatCompletion(turn: Turn, model: string, includeUsage: boolean): Frame[] {
  const frames: Frame[] = [];
  const chunk = (choices: unknown[], usage: unknown = null) =>
    frames.push({ data: { id: 'chatcmpl-fake-1', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: null, choices, ...(includeUsage ? { usage } : {}) } });
  const delta = (fields: Record<string, unknown>, finishReason: string | null = null) => chunk([{ index: 0, delta: fields, logprobs: null, finish_reason: finishReason }]);

  delta({ role: 'assistant', content: '', refusal: null });
  if (turn.reasoning !== undefined) delta({ reasoning_content: turn.reasoning });
  for (const text of textChunks(turn)) delta({ content: text });
  if (turn.refusal !== undefined) delta({ refusal: turn.refusal });
  (turn.toolCalls ?? []).forEach((call, index) => {
    const id = call.id ?? `call_fake_${index + 1}`;
    delta({ tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] });
    for (const piece of fragments(argumentText(call), call.fragments)) delta({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  const finish = turn.finish === 'length' ? 'length' : (turn.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop';
  delta({}, finish);
  if (includeUsage) {
    const u = turn.usage ?? {};
    chunk([], {
      prompt_tokens: u.input ?? 0,
      completion_tokens: u.output ?? 0,
      total_tokens: (u.input ?? 0) + (u.output ?? 0),
      prompt_tokens_details: { cached_tokens: u.cached ?? 0 },
      completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    });
  }
  frames.push({ data: '[DONE]' });
  return frames;
}

export const chatCompletionsDialect: Dialect = {
  name: 'chat-completions',
  prefix: '/v1/',
  isGeneration: (method, path) => method === 'POST' && path.endsWith('/chat/completions'),
  isModelListing: (method, path) => method === 'GET' && path.endsWith('/models'),
  apiKeyOf: (req) => bearerKey(req.headers.authorization),
  render: (turn, request) => renderChatCompletion(turn, String(request.body?.model ?? 'unknown'), request.body?.stream_options?.include_usage === true),
  errorBody: openAIErrorBody,
  listModels: (models) => openAIModelList(models),
};

export const startChatCompletionsServer = (options: VendorServerOptions = {}): Promise<VendorServer> => startVendorServer(chatCompletionsDialect, options);
