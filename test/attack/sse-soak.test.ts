/**
 * A short SSE soak (issue 13, "keep attacking"): 500 clients keep one streamed run each
 * open against a real host on loopback for AGENTICDRIVER_SOAK_SECONDS (default 30), each run
 * a mock script of text and stalls long enough for heartbeats. Every run started must end
 * with exactly one terminal event, after contiguous sequence numbers: zero lost. Resident
 * memory is sampled and its slope printed (host and clients share this process); there is
 * no timing assertion, since the machine's load decides the pace.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { script, sseEvents, startTestHost, type TestHost } from '../support/host.js';

const STREAMS = Number(process.env.AGENTICDRIVER_SOAK_STREAMS ?? 500);
const SECONDS = Number(process.env.AGENTICDRIVER_SOAK_SECONDS ?? 30);
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** Least-squares slope of (seconds, MB) samples, in MB per minute. */
function slopePerMinute(samples: [number, number][]): number {
  const n = samples.length;
  const mx = samples.reduce((sum, [x]) => sum + x, 0) / n;
  const my = samples.reduce((sum, [, y]) => sum + y, 0) / n;
  const covariance = samples.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const variance = samples.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return variance === 0 ? 0 : (covariance / variance) * 60;
}

describe(`SSE soak: ${STREAMS} concurrent streams for ${SECONDS} s`, () => {
  let host: TestHost;
  before(async () => {
    host = await startTestHost(
      { limits: { maxConcurrentRuns: STREAMS * 2, maxConcurrentRunsPerSubject: STREAMS * 2 } },
      { heartbeatMs: 500 },
    );
  });
  after(async () => {
    await host.close();
    rmSync(host.dir, { recursive: true, force: true });
  });

  it('ends every run it starts with one terminal event and no gap in sequence numbers', async () => {
    const deadline = Date.now() + SECONDS * 1000;
    const started = Date.now();
    const tally = { started: 0, completed: 0, refused: 0, events: 0 };
    const lost: string[] = [];
    const rss: [number, number][] = [];
    const sampler = setInterval(() => rss.push([(Date.now() - started) / 1000, process.memoryUsage().rss / 2 ** 20]), 1000);

    async function oneRun(client: number, round: number): Promise<void> {
      // Text, a stall past a heartbeat, more text: 1-2 s per run.
      const stall = 600 + ((client * 7919 + round * 104_729) % 900);
      const input = script([{ text: `client ${client} round ${round} ` }, { stallMs: stall }, { text: 'and the rest' }, { stallMs: 100 }, { text: '.' }]);
      const response = await host.post('/v1/runs', { provider: 'mock', model: 'demo', input }, { accept: 'text/event-stream' });
      if (response.status !== 200) {
        tally.refused += 1;
        lost.push(`client ${client} round ${round}: HTTP ${response.status} ${await response.text()}`);
        return;
      }
      tally.started += 1;
      let sequence = 0;
      let terminal: string | undefined;
      for await (const event of sseEvents(response)) {
        tally.events += 1;
        if (event.sequence !== sequence + 1) lost.push(`client ${client} round ${round}: sequence ${String(event.sequence)} after ${sequence}`);
        sequence = event.sequence as number;
        if (TERMINAL.has(event.type as string)) {
          if (terminal) lost.push(`client ${client} round ${round}: a second terminal event ${String(event.type)}`);
          terminal = event.type as string;
        }
      }
      if (terminal === 'run.completed') tally.completed += 1;
      else lost.push(`client ${client} round ${round}: ended with ${terminal ?? 'no terminal event'}`);
    }

    async function client(index: number): Promise<void> {
      for (let round = 0; Date.now() < deadline; round += 1) {
        try {
          await oneRun(index, round);
        } catch (error) {
          lost.push(`client ${index} round ${round}: ${String(error)}`);
        }
      }
    }

    try {
      await Promise.all(Array.from({ length: STREAMS }, (_, index) => client(index)));
    } finally {
      clearInterval(sampler);
    }
    const elapsed = (Date.now() - started) / 1000;
    const mbs = rss.map(([, mb]) => mb);
    console.log(
      `soak: ${STREAMS} streams, ${elapsed.toFixed(0)} s, ${tally.started} runs started, ${tally.completed} completed, ${lost.length} lost, ${tally.events} events; ` +
        `RSS start ${mbs[0]?.toFixed(0)} MB, peak ${Math.max(...mbs).toFixed(0)} MB, end ${mbs.at(-1)?.toFixed(0)} MB, slope ${slopePerMinute(rss).toFixed(1)} MB/min overall, ` +
        `${slopePerMinute(rss.filter(([at]) => at >= elapsed / 3)).toFixed(1)} MB/min after the first third (host and clients in one process)`,
    );
    assert.deepEqual(lost.slice(0, 10), []);
    assert.ok(tally.started >= STREAMS, `only ${tally.started} runs started`);
    assert.equal(tally.completed, tally.started);
  });
});
