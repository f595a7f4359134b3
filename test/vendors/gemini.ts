/**
 * Gemini API fake: `POST {base}models/{model}:streamGenerateContent?alt=sse` streamed as
 * unnamed `data:` chunks of GenerateContentResponse; `GET {base}models` paged by
 * `pageToken`. Auth: `x-goog-api-key` header (a `key=` query parameter is recorded but
 * never accepted, so tests can prove the key stays out of URLs).
 */
import { startVendorServer, type Dialect, type VendorServer, type VendorServerOptions } from './server.js';
import { textChunks, type Frame, type Turn, type VendorErrorSpec } from './script.js';

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

export const geminiErrorBody = (spec: VendorErrorSpec) => ({
  error: { code: spec.status, message: spec.message ?? `Scripted HTTP ${spec.status}.`, status: STATUS_NAMES[spec.status] ?? 'UNKNOWN' },
});

export function renderGenerateContent(turn: Turn, model: string): Frame[] {
  const frames: Frame[] = [];
  const u = turn.usage ?? {};
  const chunk = (parts: Record<string, unknown>[], finishReason?: string, usage = false) =>
    frames.push({
      data: {
        candidates: [{ content: { parts, role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) }],
        ...(usage
          ? {
              usageMetadata: {
                promptTokenCount: u.input ?? 0,
                candidatesTokenCount: (u.output ?? 0) - (u.reasoning ?? 0),
                totalTokenCount: (u.input ?? 0) + (u.output ?? 0),
                ...(u.cached !== undefined ? { cachedContentTokenCount: u.cached } : {}),
                ...(u.reasoning !== undefined ? { thoughtsTokenCount: u.reasoning } : {}),
              },
            }
          : {}),
        modelVersion: model,
        responseId: 'fake-response-1',
      },
    });
  if (turn.reasoning !== undefined) chunk([{ text: turn.reasoning, thought: true }]);
  for (const text of textChunks(turn)) chunk([{ text }]);
  const calls = (turn.toolCalls ?? []).map((call, n) => ({
    functionCall: { ...(call.id ? { id: call.id } : {}), name: call.name, args: typeof call.arguments === 'string' ? call.arguments : call.arguments },
    ...(n === 0 ? { thoughtSignature: 'b3BhcXVlLXNpZ25hdHVyZQ==' } : {}),
  }));
  if (calls.length > 0) chunk(calls);
  if (turn.refusal !== undefined) {
    frames.push({
      data: {
        candidates: [{ index: 0, finishReason: 'SAFETY', safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }] }],
        usageMetadata: { promptTokenCount: u.input ?? 0, totalTokenCount: u.input ?? 0 },
        modelVersion: model,
      },
    });
    return frames;
  }
  chunk([{ text: '' }], turn.finish === 'length' ? 'MAX_TOKENS' : 'STOP', true);
  return frames;
}

export const geminiDialect: Dialect = {
  name: 'gemini',
  prefix: '/v1beta/',
  isGeneration: (method, path) => method === 'POST' && /\/models\/[^/]+:streamGenerateContent$/.test(path),
  isModelListing: (method, path) => method === 'GET' && path.endsWith('/models'),
  apiKeyOf: (req) => (typeof req.headers['x-goog-api-key'] === 'string' ? req.headers['x-goog-api-key'] : undefined),
  render: (turn, request) => renderGenerateContent(turn, decodeURIComponent(request.path.replace(/^.*\/models\/([^/:]+):.*$/, '$1'))),
  errorBody: geminiErrorBody,
  listModels: (models, url) => {
    const size = Number(url.searchParams.get('pageSize') ?? 50);
    const start = Number(url.searchParams.get('pageToken') ?? 0);
    const page = models.slice(start, start + size);
    const next = start + size < models.length ? String(start + size) : undefined;
    return {
      status: 200,
      body: {
        models: page.map((id) => ({ name: `models/${id}`, displayName: id, supportedGenerationMethods: ['generateContent'] })),
        ...(next ? { nextPageToken: next } : {}),
      },
    };
  },
};

export const startGeminiServer = (options: VendorServerOptions = {}): Promise<VendorServer> => startVendorServer(geminiDialect, options);
