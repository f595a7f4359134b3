/** Embedding adapters by config kind, the built-in and fixture hash embedders, and the vector normalisation. */
import { DriverError } from '../../protocol/errors.js';
import type { EmbeddingAdapter, EmbeddingConfig, EmbeddingEnvironment } from './embedding.js';
import { HttpEmbedder } from './http-embedder.js';
import { geminiWire, openAIWire } from './wires.js';

export * from './embedding.js';
export { BUILTIN_EMBEDDING, builtinEmbedder, hashEmbedder } from './hash-embedder.js';
export { HttpEmbedder } from './http-embedder.js';

/** The index descriptor's account label when the config names none. */
const DEFAULT_ACCOUNT = 'default';

const DEFAULTS = {
  'openai-compatible': { vendor: 'openai-compatible', baseUrl: undefined, wire: openAIWire },
  openai: { vendor: 'openai', baseUrl: 'https://api.openai.com/v1/', wire: openAIWire },
  gemini: { vendor: 'google', baseUrl: 'https://generativelanguage.googleapis.com/v1beta/', wire: geminiWire },
} as const;

/** The embedder's provider id: the configured one, else `<kind>-embeddings`. */
export function embedderId(config: EmbeddingConfig): string {
  return config.id ?? `${config.kind}-embeddings`;
}

/**
 * The adapter a config entry names. OpenAI and Gemini need `apiKeyRef`; an OpenAI-compatible
 * server (vLLM, llama.cpp, Ollama on loopback) may have none (authMode `none`).
 */
export function createEmbeddingAdapter(config: EmbeddingConfig, env: EmbeddingEnvironment): EmbeddingAdapter & { close(): Promise<void> } {
  const defaults = DEFAULTS[config.kind];
  const providerId = embedderId(config);
  const baseUrl = config.baseUrl ?? defaults.baseUrl;
  if (baseUrl === undefined) throw new DriverError('INVALID_CONFIG', `Embedder ${providerId} needs a baseUrl.`);
  if (config.kind !== 'openai-compatible' && config.apiKeyRef === undefined) throw new DriverError('INVALID_CONFIG', `Embedder ${providerId} needs an apiKeyRef.`);
  return new HttpEmbedder(defaults.wire, {
    identity: { providerId, vendor: defaults.vendor, accountId: config.accountId ?? DEFAULT_ACCOUNT, authMode: config.apiKeyRef ? 'api-key' : 'none', model: config.model, dimensions: config.dimensions },
    baseUrl,
    ...(config.apiKeyRef ? { apiKeyRef: config.apiKeyRef } : {}),
    sendDimensions: config.sendDimensions ?? false,
    env,
  });
}
