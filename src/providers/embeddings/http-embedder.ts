/**
 * One embedding call over the API adapters' transport (HTTPS or loopback HTTP, no redirects,
 * pooled keep-alive connections, bounded strict-UTF-8 reads), with the embedding error map:
 * missing key AUTH_REQUIRED, 401/403 EMBEDDING_AUTH_REJECTED, 429 RATE_LIMITED, other HTTP
 * EMBEDDING_HTTP_ERROR, bad body INVALID_EMBEDDING, anything else EMBEDDING_FAILED. No retry.
 */
import { DriverError } from '../../protocol/errors.js';
import { describeSecretRef, type SecretRef } from '../../shared/secrets.js';
import { readText, release, secureBaseUrl, Upstream } from '../api/transport.js';
import { normalizeVector, type EmbeddingAdapter, type EmbeddingEnvironment, type EmbeddingIdentity, type EmbeddingResult } from './embedding.js';

/** What differs between vendors: the endpoint, the key header, the body and the response. */
export interface EmbeddingWire {
  vendor: string;
  path(model: string): string;
  authHeaders(key: string): Record<string, string>;
  body(texts: string[], model: string, dimensions: number | undefined): unknown;
  /** The raw vectors in input order (INVALID_EMBEDDING when the shape is wrong). */
  parse(body: any, count: number, model: string): { vectors: unknown[]; inputTokens?: number };
}

export interface HttpEmbedderOptions {
  identity: EmbeddingIdentity;
  baseUrl: string;
  apiKeyRef?: SecretRef;
  sendDimensions: boolean;
  env: EmbeddingEnvironment;
}

export class HttpEmbedder implements EmbeddingAdapter {
  readonly identity: EmbeddingIdentity;
  private readonly upstream: Upstream;

  constructor(
    private readonly wire: EmbeddingWire,
    private readonly options: HttpEmbedderOptions,
  ) {
    this.identity = options.identity;
    this.upstream = new Upstream(secureBaseUrl(options.baseUrl, options.identity.providerId));
  }

  async embed(texts: string[], signal: AbortSignal = new AbortController().signal): Promise<EmbeddingResult> {
    const { identity } = this;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKeyRef) Object.assign(headers, this.wire.authHeaders(await this.key(this.options.apiKeyRef)));
    const url = new URL(this.wire.path(identity.model), this.upstream.base);
    const body = JSON.stringify(this.wire.body(texts, identity.model, this.options.sendDimensions ? identity.dimensions : undefined));
    let response;
    try {
      response = await this.upstream.send({ url, method: 'POST', headers, body, signal });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new DriverError('EMBEDDING_FAILED', `The embedding provider ${identity.providerId} could not be reached.`, { cause: error });
    }
    const status = response.statusCode;
    if (status < 200 || status >= 300) {
      release(response, true);
      throw statusError(status, identity.providerId);
    }
    // Room for every vector as JSON text, bounded.
    const maxBytes = Math.min(32 * 1024 * 1024, 4096 + texts.length * (identity.dimensions * 32 + 256));
    let text: string;
    try {
      text = await readText(response, maxBytes, signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof DriverError && error.code !== 'INCOMPLETE_STREAM') throw new DriverError('INVALID_EMBEDDING', `The embedding response of ${identity.providerId} is too large or not UTF-8.`);
      throw new DriverError('EMBEDDING_FAILED', `The embedding response of ${identity.providerId} ended early.`, { cause: error });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new DriverError('INVALID_EMBEDDING', `The embedding response of ${identity.providerId} is not JSON.`);
    }
    const parsed = this.wire.parse(json, texts.length, identity.model);
    if (parsed.vectors.length !== texts.length) throw new DriverError('INVALID_EMBEDDING', `Expected ${texts.length} embeddings, got ${parsed.vectors.length}.`);
    const vectors = parsed.vectors.map((values) => {
      if (!Array.isArray(values)) throw new DriverError('INVALID_EMBEDDING', 'An embedding is not an array of numbers.');
      return normalizeVector(values, identity.dimensions);
    });
    return { vectors, ...(parsed.inputTokens !== undefined ? { usage: { inputTokens: parsed.inputTokens } } : {}) };
  }

  async close(): Promise<void> {
    await this.upstream.close();
  }

  private async key(ref: SecretRef): Promise<string> {
    let key: string;
    try {
      key = await this.options.env.readSecret(ref);
    } catch (error) {
      throw new DriverError('AUTH_REQUIRED', `The API key of embedder ${this.identity.providerId} (${describeSecretRef(ref)}) could not be read.`, { cause: error });
    }
    if (key === '' || /[\r\n]/.test(key)) throw new DriverError('AUTH_REQUIRED', `Embedder ${this.identity.providerId} has no usable API key (${describeSecretRef(ref)}).`);
    return key;
  }
}

function statusError(status: number, providerId: string): DriverError {
  if (status === 401 || status === 403) return new DriverError('EMBEDDING_AUTH_REJECTED', `${providerId} rejected the credentials (HTTP ${status}).`, { retryable: false });
  if (status === 429) return new DriverError('RATE_LIMITED', `${providerId} rate-limited the embedding request (HTTP 429).`, { retryable: true });
  return new DriverError('EMBEDDING_HTTP_ERROR', `${providerId} answered the embedding request with HTTP ${status}.`, { retryable: status >= 500 });
}

export const invalidEmbedding = (message: string) => new DriverError('INVALID_EMBEDDING', message);
