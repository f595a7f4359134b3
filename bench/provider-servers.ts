/**
 * The processes of the provider-path benchmark, one role each:
 *
 * - `upstream`: a lean loopback model server answering every format at once, instantly,
 *   from prebuilt bytes: Chat Completions, OpenAI Responses, Anthropic Messages and Gemini
 *   (rendered by the test vendors' renderers, so the formats are the real ones), 18 text
 *   deltas plus the vendor's framing (~20-25 SSE events). The model `long` answers one
 *   long Chat Completions stream instead (`AD_BENCH_LONG_EVENTS` text chunks).
 * - `relay`: the baseline, a bare node:http server that relays each run to the upstream
 *   over a keep-alive agent and streams the bytes back (SSE) or answers a fixed JSON body
 *   once the upstream stream ended (JSON), doing none of the host's work.
 * - `host`: the real host with the mock provider and the four API kinds pointed at the upstream;
 *   with `AD_BENCH_DIST=1` the built one (`dist/`, what `npm start` runs), else the sources
 *   through tsx.
 * - `floor`, `floor-durable`: the least a server doing the host's job does (bench/floor-server.ts).
 *
 * Each prints one JSON line `{ url }` when listening.
 */
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { floor } from './floor-server.js';
import { tempDir } from '../test/support/temp.js';
import { encodeSse, renderChatCompletion, renderGenerateContent, renderMessages, renderResponses, type Frame, type Turn } from '../test/vendors/index.js';

export const API_KINDS = ['openai-compatible', 'openai', 'anthropic', 'gemini'] as const;
export const TEXT_DELTAS = Array.from({ length: 18 }, (_, i) => `tok${i} `);
const turn: Turn = { text: TEXT_DELTAS, usage: { input: 12, output: 18, cached: 0, reasoning: 0 } };
const sse = (frames: Frame[]) => Buffer.from(frames.map((f) => ('raw' in f ? f.raw : encodeSse(f.event, f.data))).join(''));

function upstream(): Promise<number> {
  const bodies = {
    chat: sse(renderChatCompletion(turn, 'demo', true)),
    responses: sse(renderResponses(turn, 'demo')),
    messages: sse(renderMessages(turn, 'demo')),
    gemini: sse(renderGenerateContent(turn, 'demo')),
  };
  const longEvents = Number(process.env.AD_BENCH_LONG_EVENTS ?? 50_000);
  const piece = (i: number) => `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"t${i} "},"finish_reason":null}]}\n\n`;
  const long = Buffer.from(
    Array.from({ length: longEvents }, (_, i) => piece(i)).join('') +
      'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
  );
  const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = req.url ?? '';
      let body: Buffer;
      if (url.endsWith('/chat/completions')) body = Buffer.concat(chunks).includes('"model":"long"') ? long : bodies.chat;
      else if (url.endsWith('/responses')) body = bodies.responses;
      else if (url.endsWith('/messages')) body = bodies.messages;
      else if (url.includes(':streamGenerateContent')) body = bodies.gemini;
      else {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, headers);
      res.end(body);
    });
  });
  return listen(server);
}

function relay(upstreamUrl: string): Promise<number> {
  const target = new URL('/v1/chat/completions', upstreamUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const upstreamBody = (model: string) => JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello' }] });
  const json = JSON.stringify({ text: TEXT_DELTAS.join(''), usage: { inputTokens: 12, outputTokens: 18 } });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const streaming = (req.headers.accept ?? '').includes('text/event-stream');
      const body = upstreamBody(req.url?.endsWith('?long') ? 'long' : 'demo');
      const up = request(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (upRes) => {
        if (streaming) {
          res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
          upRes.pipe(res);
        } else {
          upRes.resume();
          upRes.on('end', () => {
            res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
            res.end(json);
          });
        }
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  return listen(server);
}

async function host(upstreamUrl: string): Promise<number> {
  const root = process.env.AD_BENCH_DIST === '1' ? '../dist' : '../src';
  const { parseHostConfig } = (await import(`${root}/host/config.js`)) as typeof import('../src/host/config.js');
  const { startHost } = (await import(`${root}/host/index.js`)) as typeof import('../src/host/index.js');
  // Removed on exit and on SIGTERM (test/support/temp.ts), which is how provider-path.ts stops it.
  const dir = tempDir('ad-bench-provider-');
  const base = (kind: string) => new URL(kind === 'gemini' ? '/v1beta/' : '/v1/', upstreamUrl).href;
  const ids = ['mock', ...API_KINDS];
  const config = parseHostConfig(
    {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [
        { kind: 'mock', id: 'mock', models: ['demo'] },
        ...API_KINDS.map((kind) => ({ kind, id: kind, models: ['demo', 'long'], apiKeyRef: { env: 'AD_BENCH_VENDOR_KEY' }, baseUrl: base(kind) })),
      ],
      tokens: [{ id: 'bench', subject: 'bench', tokenRef: { env: 'AD_BENCH_TOKEN' }, providers: ids }],
      limits: { maxConcurrentRuns: 10_000, maxConcurrentRunsPerSubject: 10_000 },
      state: { directory: join(dir, 'state') },
    },
    join(dir, 'config.json'),
  );
  const running = await startHost({ config });
  return Number(new URL(running.url).port);
}

function listen(server: ReturnType<typeof createServer>): Promise<number> {
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const role = process.argv[2];
  const upstreamUrl = process.env.AD_BENCH_UPSTREAM ?? '';
  const roles: Record<string, () => Promise<number>> = {
    upstream,
    relay: () => relay(upstreamUrl),
    host: () => host(upstreamUrl),
    floor: () => listen(floor(upstreamUrl, false)),
    'floor-durable': () => listen(floor(upstreamUrl, true)),
  };
  const port = await roles[role ?? '']?.();
  if (port === undefined) throw new Error(`usage: provider-servers.ts ${Object.keys(roles).join('|')}`);
  // SIGTERM ends the process through test/support/temp.ts's handler (process.exit, so `--cpu-prof` writes its profile).
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
}
