/**
 * Loopback embedding servers in the vendors' exact formats: OpenAI `POST /v1/embeddings`
 * (also what vLLM, llama.cpp and Ollama serve) and Gemini `POST /v1beta/models/{m}:batchEmbedContents`.
 * By default each text gets a vector derived from its length and position (OpenAI `data` is
 * sent in reverse index order, as a server may); `next` overrides one response.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EmbeddingRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface EmbeddingReply {
  status?: number;
  /** A JSON body, or a raw string sent as it is. */
  body?: unknown;
  raw?: string;
  /** Ends the connection without an answer. */
  drop?: boolean;
}

export interface EmbeddingServer {
  url: string;
  requests: EmbeddingRequest[];
  /** Replies used (in order) before the default one. */
  next: EmbeddingReply[];
  close(): Promise<void>;
}

/** The vector the default reply gives text `index` of a request. */
export function fakeVector(text: string, index: number, dimensions: number): number[] {
  return Array.from({ length: dimensions }, (_, slot) => ((text.length + index * 7 + slot * 3) % 11) - 5 + (slot === 0 ? 0.5 : 0));
}

export async function startEmbeddingServer(vendor: 'openai' | 'gemini', options: { apiKey?: string; dimensions: number }): Promise<EmbeddingServer> {
  const requests: EmbeddingRequest[] = [];
  const next: EmbeddingReply[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      requests.push({ path: url.pathname, headers: request.headers, body });
      const send = (status: number, payload: unknown, raw?: string) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(raw ?? JSON.stringify(payload));
      };
      const key = vendor === 'openai' ? request.headers.authorization?.replace(/^Bearer /, '') : request.headers['x-goog-api-key'];
      const scripted = next.shift();
      if (scripted?.drop) return request.socket.destroy();
      if (scripted) return send(scripted.status ?? 200, scripted.body, scripted.raw);
      if (options.apiKey !== undefined && key !== options.apiKey) {
        return send(vendor === 'openai' ? 401 : 403, vendor === 'openai' ? { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } : { error: { code: 403, message: 'API key not valid.', status: 'PERMISSION_DENIED' } });
      }
      if (vendor === 'openai') {
        if (request.method !== 'POST' || url.pathname !== '/v1/embeddings') return send(404, { error: { message: 'not found' } });
        const inputs: string[] = body.input;
        const data = inputs.map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(text, index, options.dimensions) })).reverse();
        return send(200, { object: 'list', data, model: body.model, usage: { prompt_tokens: inputs.join(' ').split(/\s+/).length, total_tokens: inputs.join(' ').split(/\s+/).length } });
      }
      const match = /^\/v1beta\/models\/([^/:]+):batchEmbedContents$/.exec(url.pathname);
      if (request.method !== 'POST' || !match) return send(404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
      const texts: string[] = body.requests.map((item: any) => item.content.parts[0].text);
      return send(200, { embeddings: texts.map((text, index) => ({ values: fakeVector(text, index, options.dimensions) })) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${vendor === 'openai' ? '/v1/' : '/v1beta/'}`,
    requests,
    next,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
