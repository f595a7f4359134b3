/**
 * How late a follower on another replica sees an attached run's events (issue 29, item 4: goal
 * p50 ≤ 10 ms on PostgreSQL, no polling interval in the path). PostgreSQL: replica A answers a
 * streaming `POST /v1/runs`, replica B (another host on the same database, its own connections)
 * follows it with `GET /v1/runs/{id}/stream` from the run id of A's first event; SQLite: one host
 * runs and follows it. The run writes a text event every `--gap` ms; each event's latency is the
 * time B's client has it minus the event's own timestamp (set when A produced it, before the
 * record's group commit). Prints p50, p99 and max per engine (bench/follow-latency.ts).
 *
 *   node scripts/postgres.mjs --run npx tsx bench/run-follow.ts [--events N] [--gap MS]
 */
import { benchFollow, frames, headers, latencies, mockScript } from './follow-latency.js';

await benchFollow('run-follow', {}, async (runner, follower) => {
  const started = await fetch(`${runner.url}/v1/runs`, { method: 'POST', headers: { ...headers, accept: 'text/event-stream' }, body: JSON.stringify({ provider: 'mock', model: 'demo', input: mockScript() }) });
  const attached = frames(started);
  const first = await attached.next();
  if (first.done) throw new Error('the run sent nothing');
  // The attached client keeps reading, as a real one would.
  const draining = (async () => {
    for await (const _ of attached);
  })();
  const measured = await latencies(await fetch(`${follower.url}/v1/runs/${first.value.event.runId}/stream`, { headers }));
  await draining;
  return measured;
});
