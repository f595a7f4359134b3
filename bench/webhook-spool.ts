/**
 * What one delivery round costs while the usage webhook is down (issue 25, item 7): the spool
 * holds N records; a round tries the oldest, fails, and waits. Before, every round read and
 * sorted the whole folder; now the folder is indexed once, at open, and a round walks the index.
 * Prints the one-time open (index) cost, a round now, and a directory read + sort of the same
 * folder (what every round used to pay) for comparison. No assertion: figures only.
 *
 *   npx tsx bench/webhook-spool.ts [--records N] [--rounds R]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebhookSink } from '../src/extensions/usage/webhook-sink.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const index = args.indexOf(name);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const records = option('--records', 20_000);
const rounds = option('--rounds', 20);

const dir = mkdtempSync(join(tmpdir(), 'agenticdriver-bench-spool-'));
const server = createServer((request, response) => {
  request.resume();
  response.writeHead(503).end();
});
try {
  mkdirSync(join(dir, 'pending'), { recursive: true });
  const body = JSON.stringify({ schema: 'agenticdriver.usage.v2', note: 'x'.repeat(900) });
  for (let index = 0; index < records; index += 1) {
    writeFileSync(join(dir, 'pending', `00000000-0000-4000-8000-${String(index).padStart(12, '0')}.json`), body);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  const sink = new WebhookSink({ url, spoolDirectory: dir, maxAttempts: 1, retryIntervalMs: 3_600_000 }, () => undefined);

  let started = process.hrtime.bigint();
  await sink.open();
  const openMs = Number(process.hrtime.bigint() - started) / 1e6;
  sink.start();
  await sink.flush();
  const indexMs = Number(process.hrtime.bigint() - started) / 1e6;

  const roundTimes: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    started = process.hrtime.bigint();
    await sink.flush();
    roundTimes.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  const scanTimes: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    started = process.hrtime.bigint();
    (await readdir(join(dir, 'pending'))).filter((name) => name.endsWith('.json')).sort();
    scanTimes.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  await sink.close();
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const spool = sink.spool();
  console.log(`spool: ${spool.pending} records, ${(spool.bytes / 1e6).toFixed(1)} MB (bound ${spool.maxRecords} records, ${spool.maxBytes / 2 ** 20} MiB)`);
  console.log(`open (what the host's start waits for): ${openMs.toFixed(1)} ms; indexing the folder once, in the background, and the first round: ${indexMs.toFixed(0)} ms`);
  console.log(`delivery round while the webhook is down, median of ${rounds}: ${median(roundTimes).toFixed(2)} ms (one attempt at the oldest record)`);
  console.log(`reading and sorting the folder, what each round used to add, median of ${rounds}: ${median(scanTimes).toFixed(2)} ms`);
} finally {
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
