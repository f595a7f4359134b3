/** Embedding adapters by config kind (HTTP services, a local model), the built-in and fixture hash embedders, and the vector normalisation. */
import { DriverError } from '../../protocol/errors.js';
import { isAbsolute, resolve } from 'node:path';
import type { EmbeddingAdapter, EmbeddingConfig, EmbeddingEnvironment } from './embedding.js';
import { HttpEmbedder } from './http-embedder.js';
import { DEFAULT_LOCAL_MODEL_THREADS, LocalModelEmbedder, localModelFiles } from './local-model.js';
import { geminiWire, openAIWire } from './wires.js';

export * from './embedding.js';
export { BUILTIN_EMBEDDING, builtinEmbedder, hashEmbedder } from './hash-embedder.js';
export { HttpEmbedder } from './http-embedder.js';
export { LocalModelEmbedder, localModelFiles, localModelRuntimeInstalled, LOCAL_MODEL_PACKAGES } from './local-model.js';

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
 * server (vLLM, llama.cpp, Ollama on loopback) may have none (authMode `none`); a local model's
 * directory (relative to `configDir`) must hold its files.
 */
export function createEmbeddingAdapter(config: EmbeddingConfig, env: EmbeddingEnvironment, configDir = '.'): EmbeddingAdapter & { close(): Promise<void> } {
  const providerId = embedderId(config);
  const accountId = config.accountId ?? DEFAULT_ACCOUNT;
  if (config.kind === 'local') {
    const directory = isAbsolute(config.path) ? config.path : resolve(configDir, config.path);
    localModelFiles(directory);
    return new LocalModelEmbedder({
      identity: { providerId, vendor: 'local', accountId, authMode: 'none', model: config.model, dimensions: config.dimensions },
      directory,
      maxTokens: config.maxTokens ?? 256,
      pooling: config.pooling ?? 'mean',
      threads: config.threads ?? DEFAULT_LOCAL_MODEL_THREADS,
    });
  }
  const defaults = DEFAULTS[config.kind];
  const baseUrl = config.baseUrl ?? defaults.baseUrl;
  if (baseUrl === undefined) throw new DriverError('INVALID_CONFIG', `Embedder ${providerId} needs a baseUrl.`);
  if (config.kind !== 'openai-compatible' && config.apiKeyRef === undefined) throw new DriverError('INVALID_CONFIG', `Embedder ${providerId} needs an apiKeyRef.`);
  return new HttpEmbedder(defaults.wire, {
    identity: { providerId, vendor: defaults.vendor, accountId, authMode: config.apiKeyRef ? 'api-key' : 'none', model: config.model, dimensions: config.dimensions },
    baseUrl,
    ...(config.apiKeyRef ? { apiKeyRef: config.apiKeyRef } : {}),
    sendDimensions: config.sendDimensions ?? false,
    env,
  });
}
