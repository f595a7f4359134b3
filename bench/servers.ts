/**
 * The two servers the overhead benchmark compares, each in its own process:
 * `host` is the real agenticdriver host with the mock provider; `bare` is node:http
 * answering the same bytes without doing any of the work.
 */
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHostConfig } from '../src/host/config.js';
import { startHost } from '../src/host/index.js';
import { frameEvent } from '../src/http/sse.js';
import type { RunEvent } from '../src/protocol/schemas.js';

async function host(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'ad-bench-'));
  const config = parseHostConfig(
    {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [{ id: 'bench', subject: 'bench', tokenRef: { env: 'AD_BENCH_TOKEN' }, providers: ['mock'] }],
      limits: { maxConcurrentRuns: 10_000, maxConcurrentRunsPerSubject: 10_000 },
      state: { directory: join(dir, 'state') },
    },
    join(dir, 'config.json'),
  );
  const running = await startHost({ config });
  return running.url;
}

async function bare(): Promise<string> {
  const runId = '00000000-0000-4000-8000-000000000000';
  const timestamp = new Date().toISOString();
  const result = { runId, provider: 'mock', model: 'demo', text: 'Hello', usage: { inputTokens: 2, outputTokens: 2 }, steps: 1, finishReason: 'stop' };
  const events: RunEvent[] = [
    { type: 'run.started', runId, sequence: 1, timestamp, provider: 'mock', model: 'demo' },
    { type: 'step.started', runId, sequence: 2, timestamp, step: 1 },
    { type: 'text.delta', runId, sequence: 3, timestamp, text: 'Hello' },
    { type: 'usage.reported', runId, sequence: 4, timestamp, step: 1, usage: result.usage },
    { type: 'run.completed', runId, sequence: 5, timestamp, result: result as never },
  ];
  const json = JSON.stringify(result);
  const sse = events.map(frameEvent).join('');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const streaming = (req.headers.accept ?? '').includes('text/event-stream');
      res.writeHead(200, { 'content-type': streaming ? 'text/event-stream; charset=utf-8' : 'application/json; charset=utf-8', 'agenticdriver-version': '1.0' });
      res.end(streaming ? sse : json);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

const kind = process.argv[2];
const url = kind === 'host' ? await host() : kind === 'bare' ? await bare() : undefined;
if (!url) throw new Error('usage: servers.ts host|bare');
process.stdout.write(`${JSON.stringify({ url })}\n`);
