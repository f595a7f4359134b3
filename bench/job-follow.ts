/**
 * How late a follower sees a background run's events (issue 29: goal p50 ≤ 10 ms on PostgreSQL,
 * no polling interval in the path). PostgreSQL: replica A runs a job, replica B (another host on
 * the same database, its own connections) streams it (`GET /v1/jobs/{id}/stream`); SQLite: one
 * host runs and streams it. The job writes a text event every `--gap` ms; each event's latency is
 * the time B's client has it minus the event's own timestamp (set when A produced it, before its
 * commit). Prints p50, p99 and max per engine (bench/follow-latency.ts).
 *
 *   node scripts/postgres.mjs --run npx tsx bench/job-follow.ts [--events N] [--gap MS]
 */
import { randomBytes } from 'node:crypto';
import { benchFollow, headers, latencies, mockScript } from './follow-latency.js';

await benchFollow('job-follow', { token: { jobs: ['submit', 'read'] }, host: { jobs: { retentionMs: 60_000 } } }, async (runner, follower) => {
  const submitted = await fetch(`${runner.url}/v1/jobs/submit`, { method: 'POST', headers, body: JSON.stringify({ key: randomBytes(8).toString('hex'), request: { provider: 'mock', model: 'demo', input: mockScript() } }) });
  const job = (await submitted.json()) as { id: string };
  return latencies(await fetch(`${follower.url}/v1/jobs/${job.id}/stream`, { headers }));
});
