/**
 * The floor of the provider path: the least any server doing the host's job for an
 * `openai-compatible` run does, with the host's own libraries and none of its machinery. It
 * parses the run request, asks the upstream through an undici `Pool` (as the host's transport
 * does), parses every SSE event of the answer as JSON, and answers the run's text as JSON or as
 * SSE frames (one `text.delta` frame per upstream read). No auth, validation, run loop,
 * observers or metering.
 *
 * With `durable`, it also keeps what the host's guarantee needs at the least: a start record per
 * run and its end record, group-committed (one SQLite transaction per turn across runs,
 * `synchronous = FULL`); the start record's commit overlaps the upstream call and the answer
 * waits for the end record's commit.
 *
 * It sets the figures the host's own can be read against (`bench/provider-path.ts`, targets
 * `floor` and `floor+durable`): what is left between `floor` and `relay` is the parsing any
 * host must do, and between the host and `floor` its machinery.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { tempDir } from '../test/support/temp.js';

interface Store {
  write(kind: 'start' | 'end', id: string, value: string): Promise<void>;
}

/** One transaction per turn for every record queued in it, as the host's store commits. */
function groupCommitted(): Store {
  const db = new Database(join(tempDir('ad-bench-floor-'), 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE runs (id TEXT PRIMARY KEY, started TEXT NOT NULL, ended TEXT)');
  const start = db.prepare('INSERT INTO runs (id, started) VALUES (?, ?)');
  const end = db.prepare('UPDATE runs SET ended = ? WHERE id = ?');
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  let queued: { kind: 'start' | 'end'; id: string; value: string; done: () => void }[] = [];
  const flush = () => {
    const batch = queued;
    queued = [];
    begin.run();
    for (const item of batch) {
      if (item.kind === 'start') start.run(item.id, item.value);
      else end.run(item.value, item.id);
    }
    commit.run();
    for (const item of batch) item.done();
  };
  return {
    write: (kind, id, value) =>
      new Promise((resolve) => {
        if (queued.length === 0) setImmediate(flush);
        queued.push({ kind, id, value, done: resolve });
      }),
  };
}

export function floor(upstreamUrl: string, durable: boolean): ReturnType<typeof createServer> {
  const pool = new Pool(new URL(upstreamUrl).origin, { connections: null, pipelining: 1 });
  const store = durable ? groupCommitted() : undefined;
  let runs = 0;
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => void serve(req, res, Buffer.concat(chunks)).catch(() => res.destroy()));
  });

  async function serve(req: IncomingMessage, res: ServerResponse, bytes: Buffer): Promise<void> {
    const run = JSON.parse(bytes.toString('utf8')) as { model?: string; input?: string };
    const id = `run_${(runs += 1)}`;
    const started = store?.write('start', id, new Date().toISOString());
    const streaming = (req.headers.accept ?? '').includes('text/event-stream');
    const body = JSON.stringify({ model: run.model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: run.input }] });
    const upstream = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body });
    let text = '';
    let usage: unknown;
    let pending = '';
    let sequence = 0;
    await started;
    if (streaming) res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    upstream.body.setEncoding('utf8');
    for await (const chunk of upstream.body as AsyncIterable<string>) {
      pending += chunk;
      let readText = '';
      let end: number;
      while ((end = pending.indexOf('\n\n')) >= 0) {
        const event = pending.slice(0, end);
        pending = pending.slice(end + 2);
        if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
        const parsed = JSON.parse(event.slice(6)) as { choices?: { delta?: { content?: string } }[]; usage?: unknown };
        readText += parsed.choices?.[0]?.delta?.content ?? '';
        if (parsed.usage) usage = parsed.usage;
      }
      text += readText;
      if (streaming && readText) res.write(`id: ${(sequence += 1)}\nevent: text.delta\ndata: ${JSON.stringify({ type: 'text.delta', text: readText })}\n\n`);
    }
    const result = JSON.stringify({ text, usage });
    await store?.write('end', id, result);
    if (streaming) res.end(`id: ${sequence + 1}\nevent: run.completed\ndata: {"type":"run.completed","result":${result}}\n\n`);
    else {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(result);
    }
  }
}
