/**
 * Connection reuse on the API provider path, counted where it happens: on the loopback
 * vendor server. Sequential runs share one keep-alive connection, an error answer does not
 * cost one, an aborted run closes only its own connection (the pool keeps serving), and
 * closing the provider closes what it pooled.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Step } from '../../vendors/index.js';
import { framesThroughText, KINDS, outcome, runRequest, setup } from './harness.js';

const RUNS = 100;
const textTurn = (i: number): Step => ({ turn: { text: [`run `, String(i)], usage: { input: 3, output: 2 } } });

const waitFor = async (condition: () => boolean, what: string, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

for (const kase of KINDS) {
  describe(`${kase.kind}: upstream connections`, () => {
    it(`opens at most 2 connections for ${RUNS} sequential runs, also across an error answer`, async () => {
      const { server, driver, adapter, close } = await setup(kase, { script: Array.from({ length: RUNS }, (_, i) => textTurn(i)) });
      try {
        for (let i = 0; i < RUNS; i += 1) {
          const result = await driver.run(runRequest(kase.kind));
          assert.equal(result.text, `run ${i}`);
        }
        assert.equal(server.generations.length, RUNS);
        assert.ok(server.connections <= 2, `${server.connections} connections for ${RUNS} runs`);
        const before = server.connections;
        server.push({ error: { status: 500, message: 'boom' } }, textTurn(RUNS));
        assert.equal((await outcome(driver, runRequest(kase.kind))).error?.code, 'PROVIDER_ERROR');
        assert.equal((await driver.run(runRequest(kase.kind))).text, `run ${RUNS}`);
        assert.equal(server.connections, before, 'an error answer is read to its end and its connection kept');
        await adapter.close?.();
        await waitFor(() => server.openConnections === 0, 'the pooled connections to close');
      } finally {
        await close();
      }
    });

    it('closes the connection of an aborted run and keeps serving from the pool', async () => {
      const { server, driver, adapter, close } = await setup(kase, { script: [textTurn(0)] });
      try {
        assert.equal((await driver.run(runRequest(kase.kind))).text, 'run 0');
        // A stream that sends its first text and then never ends, cancelled mid-stream by the caller.
        const hanging = { text: ['partial ', 'never finished'] };
        server.push({ turn: hanging, cutAfter: framesThroughText(kase, hanging, 'partial'), then: 'hang' });
        const controller = new AbortController();
        const events: string[] = [];
        try {
          for await (const event of driver.stream(runRequest(kase.kind), { signal: controller.signal })) {
            events.push(event.type);
            if (event.type === 'text.delta') controller.abort(new Error('caller gave up'));
          }
        } catch {
          // Either a run.cancelled event or the caller's own reason: both end the run here.
        }
        assert.ok(events.includes('text.delta'), 'the run was cut mid-stream');
        assert.ok(!events.includes('run.completed'));
        const aborted = server.generations.at(-1)!;
        await aborted.abortedPromise; // the upstream saw the abort: its connection was closed
        const afterAbort = server.connections;
        server.push(...Array.from({ length: 20 }, (_, i) => textTurn(i + 1)));
        for (let i = 1; i <= 20; i += 1) assert.equal((await driver.run(runRequest(kase.kind))).text, `run ${i}`);
        assert.ok(server.connections - afterAbort <= 1, `${server.connections - afterAbort} new connections after the abort`);
        assert.ok(server.connections <= 3, `${server.connections} connections in all`);
        await adapter.close?.();
        await waitFor(() => server.openConnections === 0, 'the pooled connections to close');
      } finally {
        await close();
      }
    });
  });
}

describe('a stream held open after its last event', () => {
  it('completes the run, and its connection is closed after the bounded drain', async () => {
    const kase = KINDS.find((k) => k.kind === 'openai-compatible')!;
    const { server, driver, adapter, close } = await setup(kase, { script: [{ turn: { text: ['held ', 'open'] }, then: 'hang' }, textTurn(1)] });
    try {
      assert.equal((await driver.run(runRequest(kase.kind))).text, 'held open');
      assert.equal((await driver.run(runRequest(kase.kind))).text, 'run 1', 'the next run is served on another connection');
      assert.equal(server.connections, 2);
      // The held connection is given up after the drain deadline (5 s) by the sweeper (every 1 s).
      await waitFor(() => server.generations[0]!.aborted, 'the held response to be abandoned', 10_000);
      assert.ok(server.openConnections <= 1, 'at most the idle pooled connection is left (the server may time it out meanwhile)');
      await adapter.close?.();
      await waitFor(() => server.openConnections === 0, 'the pooled connections to close');
    } finally {
      await close();
    }
  });
});
