/**
 * The adapter shell every API kind shares: key per turn, request, optional 429 retry,
 * SSE stream into the dialect's parser, and the discovery probe over the vendor's
 * model-listing endpoint. A dialect supplies only the vendor's formats.
 */
import { DriverError } from '../../protocol/errors.js';
import { describeSecretRef } from '../../shared/secrets.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import type { MediaType, ProviderAdapter, ProviderInfo, ProviderInspection, ProviderPart, ProviderRequest } from '../contract/v1.js';
import type { ProviderEnvironment } from '../registry.js';
import type { ApiProviderEntry } from './config.js';
import { openWithRetry } from './retry.js';
import { invalid, isEventStream, MAX_JSON_BYTES, parseJson, partBatches, readSse, readText, release, secureBaseUrl, statusError, Upstream, type StreamParser, type TransportOptions } from './transport.js';

export interface ModelPage {
  ids: string[];
  /** Cursor of the next page; undefined on the last page. */
  next: string | undefined;
}

export interface ApiDialect {
  vendor: string;
  defaultName: string;
  /** Absent: the kind requires `baseUrl`. */
  defaultBaseUrl?: string;
  /** Binary media the vendor accepts (configurable per model through `inputMediaTypes`). */
  mediaTypes: readonly MediaType[];
  capabilities?: Record<string, boolean>;
  authHeaders(key: string): Record<string, string>;
  generation(request: ProviderRequest, base: URL): { url: URL; body: unknown };
  /** A reading of one generation stream (a new one per step). */
  parser(): StreamParser;
  modelsPage(base: URL, cursor: string | undefined): URL;
  readModels(body: any): ModelPage;
}

export interface ApiProviderOptions {
  transport?: TransportOptions;
  clock?: Clock;
}

const DISCOVERY_LIMITS = { pages: 20, models: 1000, bytes: MAX_JSON_BYTES };

export class ApiProvider implements ProviderAdapter {
  readonly info: ProviderInfo;
  private readonly base: URL;
  private readonly clock: Clock;
  /** The instance's keep-alive connections to its vendor; closed with the provider. */
  private readonly upstream: Upstream;

  constructor(
    private readonly dialect: ApiDialect,
    private readonly entry: ApiProviderEntry,
    private readonly env: ProviderEnvironment,
    private readonly options: ApiProviderOptions = {},
  ) {
    const rawBase = entry.baseUrl ?? dialect.defaultBaseUrl;
    if (rawBase === undefined) throw new DriverError('INVALID_CONFIG', `Provider ${entry.id} needs a baseUrl.`);
    this.base = secureBaseUrl(rawBase, entry.id);
    this.clock = options.clock ?? systemClock;
    this.upstream = new Upstream(this.base, options.transport);
    const media = checkMediaTypes(entry, dialect);
    this.info = {
      id: entry.id,
      name: entry.name ?? dialect.defaultName,
      vendor: dialect.vendor,
      authMode: 'api-key',
      capabilities: {
        tools: true,
        textStreaming: true,
        safeRetries: true,
        structuredOutput: true,
        ...(media.some((types) => types.some((t) => t.startsWith('image/'))) ? { images: true } : {}),
        ...(media.some((types) => types.includes('application/pdf')) ? { documents: true } : {}),
        ...dialect.capabilities,
      },
      models: [...entry.models],
      usageStatId: dialect.vendor,
      ...(entry.inputMediaTypes ? { inputMediaTypes: structuredClone(entry.inputMediaTypes) } : {}),
    };
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderPart> {
    for await (const parts of this.streamBatches(request, signal)) yield* parts;
  }

  /** The step's parts a whole upstream read at a time. */
  async *streamBatches(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderPart[]> {
    const key = await this.apiKey();
    const { url, body } = this.dialect.generation(request, this.base);
    const payload = JSON.stringify(body);
    const headers = { ...this.dialect.authHeaders(key), 'content-type': 'application/json', accept: 'text/event-stream' };
    const response = await openWithRetry(() => this.upstream.send({ url, method: 'POST', headers, body: payload, signal }), request.retry, signal, this.clock);
    let finished = false;
    try {
      const status = response.statusCode;
      if (status < 200 || status >= 300) throw statusError(response, this.info.name);
      if (!isEventStream(response)) throw invalid(`${this.info.name} did not answer with an event stream.`);
      yield* partBatches(readSse(response, signal), this.dialect.parser());
      finished = true;
    } finally {
      release(response, finished);
    }
  }

  /** Discovery: the vendor's model list, never a generation call; bounded pages, models and bytes. */
  async inspect(signal: AbortSignal): Promise<ProviderInspection> {
    const health = (status: ProviderInspection['health']['status'], code: string, message: string) => ({
      health: { status, code, message, checkedAt: new Date(this.clock.now()).toISOString() },
    });
    let key: string;
    try {
      key = await this.apiKey();
    } catch (error) {
      return health('unauthenticated', 'AUTH_REQUIRED', (error as Error).message);
    }
    const models = new Set<string>();
    const cursors = new Set<string>();
    let cursor: string | undefined;
    let bytes = 0;
    let complete = false;
    let overflow = false;
    for (let page = 0; page < DISCOVERY_LIMITS.pages && models.size < DISCOVERY_LIMITS.models; page += 1) {
      let response;
      try {
        response = await this.upstream.send({ url: this.dialect.modelsPage(this.base, cursor), method: 'GET', headers: { ...this.dialect.authHeaders(key), accept: 'application/json' }, signal });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        return health('unavailable', 'PROVIDER_UNREACHABLE', 'The provider could not be reached.');
      }
      const status = response.statusCode;
      if (status !== 200) {
        release(response, true);
        if (status === 401) return health('unauthenticated', 'AUTH_REJECTED', 'The provider rejected the API key.');
        if (status === 403) return health('unsupported', 'ACCESS_DENIED', 'The API key may not list models.');
        if (status === 429) return health('unavailable', 'RATE_LIMITED', 'The provider rate-limited the model listing.');
        if (status === 404 || status === 405) return health('unsupported', 'DISCOVERY_UNSUPPORTED', 'The provider has no model-listing endpoint.');
        return health('unavailable', 'DISCOVERY_FAILED', `The model listing answered HTTP ${status}.`);
      }
      let listed: ModelPage;
      try {
        const text = await readText(response, DISCOVERY_LIMITS.bytes - bytes, signal);
        bytes += Buffer.byteLength(text);
        listed = this.dialect.readModels(parseJson(text, 'model list'));
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const tooLarge = error instanceof DriverError && error.code === 'RESPONSE_TOO_LARGE';
        return health('unavailable', 'INVALID_DISCOVERY_RESPONSE', tooLarge ? 'The model listing is too large.' : 'The model listing is malformed.');
      }
      for (const id of listed.ids) {
        if (models.size < DISCOVERY_LIMITS.models) models.add(id);
        else if (!models.has(id)) overflow = true;
      }
      if (listed.next === undefined) {
        complete = !overflow;
        break;
      }
      if (cursors.has(listed.next)) return health('unavailable', 'INVALID_DISCOVERY_RESPONSE', 'The model listing repeated a page cursor.');
      cursors.add(listed.next);
      cursor = listed.next;
    }
    return {
      ...health('ready', 'CATALOG_AVAILABLE', 'The provider listed its models.'),
      modelCatalog: { source: 'provider', models: [...models], complete },
    };
  }

  /** The API key, re-read on every call so rotated keys apply to the next turn. */
  private async apiKey(): Promise<string> {
    const where = () => describeSecretRef(this.entry.apiKeyRef);
    let key: string;
    try {
      key = await this.env.readSecret(this.entry.apiKeyRef);
    } catch (error) {
      throw new DriverError('AUTH_REQUIRED', `The API key of provider ${this.info.id} (${where()}) could not be read.`, { cause: error });
    }
    if (key === '') throw new DriverError('AUTH_REQUIRED', `Provider ${this.info.id} has no API key (${where()} is empty or missing).`);
    if (key.includes('\n') || key.includes('\r')) throw new DriverError('AUTH_REQUIRED', `The API key of provider ${this.info.id} (${where()}) contains a line break.`);
    return key;
  }

  /** Closes the instance's pooled connections (provider disposal, host shutdown). */
  async close(): Promise<void> {
    await this.upstream.close();
  }
}

function checkMediaTypes(entry: ApiProviderEntry, dialect: ApiDialect): MediaType[][] {
  const lists = Object.entries(entry.inputMediaTypes ?? {});
  for (const [model, types] of lists) {
    if (!entry.models.includes(model)) throw new DriverError('INVALID_CONFIG', `Provider ${entry.id} lists input media for ${model}, which is not one of its models.`);
    const unsupported = types.find((type) => !type.startsWith('text/') && !dialect.mediaTypes.includes(type));
    if (unsupported) throw new DriverError('INVALID_CONFIG', `Provider ${entry.id} (${dialect.vendor}) cannot take ${unsupported} input.`);
  }
  return lists.map(([, types]) => types);
}
