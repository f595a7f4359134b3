/**
 * `gemini`: the Gemini API (`models/{model}:streamGenerateContent?alt=sse`). The key
 * travels in the `x-goog-api-key` header, never in a URL. The model's parts (with their
 * thought signatures) are replayed verbatim on the next step.
 */
import { randomUUID } from 'node:crypto';
import { DriverError } from '../../protocol/errors.js';
import type { ProviderMessage, ProviderPart, ProviderRequest, ToolCall } from '../contract/v1.js';
import { defineProviderKind } from '../registry.js';
import { ApiProvider, type ApiDialect } from './api-provider.js';
import { apiProviderConfig } from './config.js';
import { count, finishStep, isObject, toolArguments, userContent, usageOf } from './shared.js';
import { incomplete, invalid, parseJson, type StreamParser } from './transport.js';

export const GeminiProviderConfig = apiProviderConfig('gemini', 'GeminiProviderConfig', false);

interface Content {
  role: 'user' | 'model';
  parts: unknown[];
}

function contents(list: ProviderMessage[]): Content[] {
  const out: Content[] = [];
  const push = (role: Content['role'], parts: unknown[]) => {
    const last = out.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  };
  for (const message of list) {
    if (message.role === 'tool') {
      let result: unknown = message.content;
      try {
        result = JSON.parse(message.content);
      } catch {
        // Non-JSON tool output is passed as the string it is.
      }
      push('user', [{ functionResponse: { id: message.callId, name: message.name, response: { result } } }]);
    } else if (message.role === 'assistant') push('model', Array.isArray(message.native) ? message.native : [{ text: message.content }]);
    else {
      const { text, media } = userContent(message.content, message.context);
      push('user', [{ text }, ...media.flatMap((item) => [{ text: item.label }, { inlineData: { mimeType: item.mediaType, data: item.data } }])]);
    }
  }
  return out;
}

/** Only what the run asks for: no output-token limit unless the run or the host set one. */
function generationConfig(request: ProviderRequest): { generationConfig: Record<string, unknown> } | undefined {
  const config = {
    ...(request.maxOutputTokens !== undefined ? { maxOutputTokens: request.maxOutputTokens } : {}),
    ...(request.outputSchema ? { responseMimeType: 'application/json', responseJsonSchema: request.outputSchema } : {}),
  };
  return Object.keys(config).length > 0 ? { generationConfig: config } : undefined;
}

export function generateContentBody(request: ProviderRequest): Record<string, unknown> {
  return {
    contents: contents(request.messages),
    ...(request.instructions ? { systemInstruction: { parts: [{ text: request.instructions }] } } : {}),
    ...(generationConfig(request) ?? {}),
    ...(request.tools.length > 0
      ? { tools: [{ functionDeclarations: request.tools.map((tool) => ({ name: tool.name, description: tool.description, parametersJsonSchema: tool.inputSchema })) }] }
      : {}),
  };
}

/** Folds generateContent chunks: text streams out; the finish reason, calls and usage are read once the stream ends. */
export function parseGenerateContent(): StreamParser {
  const parts: Record<string, any>[] = [];
  let finishReason: string | undefined;
  let usage: Record<string, unknown> = {};
  return {
    read(events, out) {
      for (const { data } of events) {
        const chunk = parseJson(data);
        if (!isObject(chunk)) throw invalid('Gemini sent a chunk that is not an object.');
        if (chunk.error !== undefined) throw new DriverError('PROVIDER_FAILED', 'Gemini reported a failure while generating the response.');
        if (chunk.promptFeedback?.blockReason) throw new DriverError('PROVIDER_REFUSAL', 'Gemini blocked the prompt.');
        if (isObject(chunk.usageMetadata)) usage = { ...usage, ...chunk.usageMetadata };
        const candidates = chunk.candidates ?? [];
        if (!Array.isArray(candidates) || candidates.length > 1) throw invalid('Gemini sent more than one candidate.');
        const candidate = candidates[0];
        if (candidate === undefined) continue;
        if (!isObject(candidate)) throw invalid('Gemini sent a malformed candidate.');
        for (const part of candidate.content?.parts ?? []) {
          if (!isObject(part)) throw invalid('Gemini sent a malformed part.');
          parts.push(part);
          if (typeof part.text === 'string' && part.thought !== true) {
            if (part.text !== '') out.push({ type: 'text-delta', text: part.text });
          } else out.push({ type: 'progress' });
        }
        if (typeof candidate.finishReason === 'string') finishReason = candidate.finishReason;
      }
      return false;
    },
    end(out) {
      if (finishReason === undefined) throw incomplete('The Gemini stream ended without a finish reason.');
      if (['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII'].includes(finishReason)) {
        throw new DriverError('PROVIDER_REFUSAL', `Gemini declined to answer (${finishReason}).`);
      }
      if (finishReason !== 'STOP' && finishReason !== 'MAX_TOKENS') throw new DriverError('PROVIDER_FAILED', `Gemini stopped with ${finishReason}.`);
      const lengthHit = finishReason === 'MAX_TOKENS';
      const calls: ToolCall[] = parts
        .filter((part) => isObject(part.functionCall))
        .map(({ functionCall }) => {
          if (typeof functionCall.name !== 'string') throw invalid('Gemini sent a function call without a name.');
          const id = typeof functionCall.id === 'string' && functionCall.id !== '' ? functionCall.id : `call_${randomUUID()}`;
          // Keep the id we hand out, so the functionResponse of the next step matches it.
          functionCall.id = id;
          return { id, name: functionCall.name, arguments: lengthHit ? {} : toolArguments(functionCall.args ?? {}, functionCall.name) };
        });
      const prompt = count(usage.promptTokenCount);
      const candidatesTokens = count(usage.candidatesTokenCount);
      const thoughts = count(usage.thoughtsTokenCount);
      const total = count(usage.totalTokenCount);
      const output =
        candidatesTokens !== undefined && thoughts !== undefined
          ? candidatesTokens + thoughts
          : candidatesTokens !== undefined && usage.thoughtsTokenCount === undefined
            ? candidatesTokens
            : total !== undefined && prompt !== undefined && total >= prompt
              ? total - prompt
              : undefined;
      out.push(
        ...finishStep(
          calls,
          lengthHit,
          usageOf({ inputTokens: prompt, outputTokens: output, cachedInputTokens: count(usage.cachedContentTokenCount), reasoningTokens: thoughts }),
          parts.filter((part) => !(part.text === '' && Object.keys(part).length === 1)),
        ),
      );
    },
  };
}

export const geminiDialect: ApiDialect = {
  vendor: 'gemini',
  defaultName: 'Gemini API',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta/',
  mediaTypes: ['image/png', 'image/jpeg', 'image/webp', 'application/pdf'],
  // Opaque native state is replayed between the steps of one run; sessions replay their history.
  capabilities: { nativeContinuation: false },
  authHeaders: (key) => ({ 'x-goog-api-key': key }),
  generation: (request, base) => {
    const url = new URL(`models/${encodeURIComponent(request.model.replace(/^models\//, ''))}:streamGenerateContent`, base);
    url.searchParams.set('alt', 'sse');
    return { url, body: generateContentBody(request) };
  },
  parser: parseGenerateContent,
  modelsPage: (base, cursor) => {
    const url = new URL('models', base);
    url.searchParams.set('pageSize', '100');
    if (cursor !== undefined) url.searchParams.set('pageToken', cursor);
    return url;
  },
  readModels: (body) => {
    if (!isObject(body) || (body.models !== undefined && !Array.isArray(body.models))) throw invalid('Malformed model list.');
    const next = body.nextPageToken;
    if (next !== undefined && (typeof next !== 'string' || next.length > 4096)) throw invalid('Malformed model list.');
    const ids = (body.models ?? [])
      .map((row: any) => (typeof row?.name === 'string' ? row.name.replace(/^models\//, '') : undefined))
      .filter((id: unknown): id is string => typeof id === 'string' && id !== '');
    return { ids, next: next === '' ? undefined : next };
  },
};

export const geminiKind = defineProviderKind({
  kind: 'gemini',
  configSchema: GeminiProviderConfig,
  create: (entry, env) => new ApiProvider(geminiDialect, entry, env),
});
