/** The embedding wire formats: OpenAI `/embeddings` (also vLLM, llama.cpp, Ollama) and Gemini `batchEmbedContents`. */
import { invalidEmbedding, type EmbeddingWire } from './http-embedder.js';

const isObject = (value: unknown): value is Record<string, any> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `POST {base}/embeddings` `{model, input, encoding_format: "float", dimensions?}` → `{object: "list", data: [{index, embedding}], usage}`. */
export const openAIWire: EmbeddingWire = {
  vendor: 'openai',
  path: () => 'embeddings',
  authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
  body: (texts, model, dimensions) => ({ model, input: texts, encoding_format: 'float', ...(dimensions !== undefined ? { dimensions } : {}) }),
  parse(body, count) {
    if (!isObject(body) || body.object !== 'list' || !Array.isArray(body.data)) throw invalidEmbedding('The embedding response is not a list.');
    if (body.data.length !== count) throw invalidEmbedding(`Expected ${count} embeddings, got ${body.data.length}.`);
    const vectors: unknown[] = new Array(count);
    for (const item of body.data) {
      const index = isObject(item) ? item.index : undefined;
      if (!Number.isInteger(index) || index < 0 || index >= count || vectors[index] !== undefined) throw invalidEmbedding('The embedding indices are not 0..n-1, each once.');
      vectors[index] = item.embedding;
    }
    const tokens = isObject(body.usage) ? body.usage.prompt_tokens : undefined;
    return { vectors, ...(Number.isInteger(tokens) && tokens >= 0 ? { inputTokens: tokens } : {}) };
  },
};

/** `POST {base}/models/{model}:batchEmbedContents` with `x-goog-api-key` → `{embeddings: [{values}]}` in request order. */
export const geminiWire: EmbeddingWire = {
  vendor: 'google',
  path: (model) => `models/${encodeURIComponent(model)}:batchEmbedContents`,
  authHeaders: (key) => ({ 'x-goog-api-key': key }),
  body: (texts, model, dimensions) => ({
    requests: texts.map((text) => ({ model: `models/${model}`, content: { parts: [{ text }] }, ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}) })),
  }),
  parse(body, count) {
    if (!isObject(body) || !Array.isArray(body.embeddings)) throw invalidEmbedding('The embedding response has no embeddings.');
    if (body.embeddings.length !== count) throw invalidEmbedding(`Expected ${count} embeddings, got ${body.embeddings.length}.`);
    return { vectors: body.embeddings.map((item: unknown) => (isObject(item) ? item.values : undefined)) };
  },
};
