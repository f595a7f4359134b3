/**
 * PostgreSQL replicas that share a config share its state directory (issue 25, item 4), set
 * up as docs/deployment.md says: two `agenticdriver serve` processes, one config. A starting
 * replica used to read the other's live usage journal as dead, send its runs to the sinks as
 * `interrupted` and delete them — a receiver deduplicating by `recordId` then kept the false
 * record and dropped the real one. Each replica now keeps its local files in a slot of its own
 * (`state/replica-N`, locked for its life); a slot whose replica died is adopted by the next
 * replica that starts: its open runs reach the sinks as interrupted, its spool moves over.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { script, sseEvents } from '../support/host.js';
import { CLI_MAIN, killAll, spawnHost, type HostProcess } from '../support/processes.js';
import { freshDatabase } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'replica-state-token-0123456789abcdefghi';
const lookup = { name: 'lookup', description: 'Looks up', inputSchema: { type: 'object' }, requiresApproval: true };

/** A loopback usage webhook that keeps every record it accepted, and can be switched down (503). */
class Receiver {
  readonly records: { recordId: string; status: string }[] = [];
  up = true;
  url = '';
  private readonly server = createServer((request, response) => void this.handle(request, response));

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/usage`;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (!this.up) {
      response.writeHead(503).end();
      return;
    }
    this.records.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { recordId: string; status: string });
    response.writeHead(204).end();
  }

  statuses(runId: string): string[] {
    return this.records.filter((record) => record.recordId === runId).map((record) => record.status);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Reads the stream up to and including the first event of `type` (never past it). */
async function nextOfType(events: AsyncGenerator<Record<string, any>>, type: string): Promise<Record<string, any>> {
  for (;;) {
    const next = await events.next();
    if (next.done) throw new Error(`the stream ended before ${type}`);
    if (next.value.type === type) return next.value;
  }
}

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('PostgreSQL replicas sharing a config keep their local state apart (issue 25, item 4)', () => {
  const dir = tempDir('agenticdriver-replica-state-');
  const state = join(dir, 'state');
  const config = join(dir, 'replicas.json');
  const receiver = new Receiver();
  const children: ChildProcess[] = [];
  let env: NodeJS.ProcessEnv = {};
  let drop: () => Promise<void> = async () => undefined;

  before(async () => {
    await receiver.listen();
    const database = await freshDatabase();
    drop = database.drop;
    env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_REPLICA_TOKEN: TOKEN, AGENTICDRIVER_DATABASE_URL: database.url };
    // docs/deployment.md's replicas.json, with a usage webhook.
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port: 7433 },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [
          { id: 'app', subject: 'my-app', tokenRef: { env: 'AD_REPLICA_TOKEN' }, providers: ['mock'], approveTools: ['lookup'], applicationTools: [{ name: 'lookup', requiresApproval: true }] },
        ],
        approvals: { interactive: true },
        applicationTools: { enabled: true },
        state: { engine: 'postgres', urlRef: { env: 'AGENTICDRIVER_DATABASE_URL' }, leaseMs: 15000 },
        usage: { webhook: { url: receiver.url, retryIntervalMs: 100, maxAttempts: 1 } },
      }),
      { mode: 0o600 },
    );
  });
  after(async () => {
    killAll(children);
    await receiver.close();
    await drop();
  });

  const serve = () => spawnHost([CLI_MAIN, 'serve', '--config', config, '--port', '0', '--json'], env, children);
  const post = (url: string, path: string, body: unknown, accept?: string) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body: JSON.stringify(body) });
  const record = (slot: string) => JSON.parse(readFileSync(join(state, slot, 'host.json'), 'utf8')) as { pid: number; url: string };

  let a: HostProcess;
  let b: HostProcess;

  it('a replica starting beside a live one sends none of its runs as interrupted, and each keeps its own slot', async () => {
    a = await serve();
    const response = await post(
      a.url,
      '/v1/runs',
      {
        provider: 'mock',
        model: 'demo',
        tools: ['lookup'],
        applicationTools: [lookup],
        approvals: { mode: 'interactive', idlePolicy: 'pause' },
        input: script([{ toolCall: { name: 'lookup', arguments: {} } }], [{ echoToolResults: true }]),
      },
      'text/event-stream',
    );
    const events = sseEvents(response);
    const approval = (await nextOfType(events, 'approval.requested')).approval as { approvalId: string; runId: string; call: unknown };
    assert.ok(existsSync(join(state, 'replica-1', 'usage-runs', `${approval.runId}.json`)), 'A journals its live run in its own slot');

    // The second replica starts while A's run waits for a person.
    b = await serve();
    assert.deepEqual([record('replica-1').pid, record('replica-1').url], [a.child.pid, a.url]);
    assert.deepEqual([record('replica-2').pid, record('replica-2').url], [b.child.pid, b.url]);
    assert.ok(existsSync(join(state, 'replica-1', 'usage-runs', `${approval.runId}.json`)), "B left A's journal alone");

    // Decision and tool result on B; the run completes on A (docs/deployment.md, section 5).
    const decided = await post(b.url, '/v1/approvals/decisions', { approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision: 'approve' });
    assert.equal(decided.status, 200, await decided.clone().text());
    const execution = (await nextOfType(events, 'tool.execution.requested')).execution as { executionId: string; runId: string; call: { id: string } };
    const result = await post(b.url, '/v1/tool-executions/results', { executionId: execution.executionId, runId: execution.runId, callId: execution.call.id, output: { found: true } });
    assert.equal(result.status, 200, await result.clone().text());
    let last: Record<string, any> | undefined;
    for (let next = await events.next(); !next.done; next = await events.next()) last = next.value;
    assert.equal(last?.type, 'run.completed');

    await until(() => receiver.statuses(approval.runId).length > 0, "the run's usage record");
    assert.deepEqual(receiver.statuses(approval.runId), ['completed'], 'the receiver never got an interrupted record for a run that completed');
  });

  it('a replica that died leaves its slot to the next one that starts: its open runs arrive as interrupted, its spool is delivered', async () => {
    // B holds a spooled record (the webhook is down) and a live run, then dies.
    receiver.up = false;
    const done = await post(b.url, '/v1/runs', { provider: 'mock', model: 'demo', input: 'spooled on B' });
    const spooled = ((await done.json()) as { runId: string }).runId;
    await until(() => readdirSync(join(state, 'replica-2', 'usage-spool', 'pending')).includes(`${spooled}.json`), "B's spooled record");
    const live = await post(b.url, '/v1/runs', { provider: 'mock', model: 'demo', input: script([{ text: 'working' }, { hang: true }]) }, 'text/event-stream');
    const liveEvents = sseEvents(live);
    const started = (await liveEvents.next()).value!;
    const open = started.runId as string;
    assert.ok(existsSync(join(state, 'replica-2', 'usage-runs', `${open}.json`)));
    b.child.kill('SIGKILL');
    await b.exited;
    a.child.kill('SIGTERM');
    assert.equal(await a.exited, 0);
    assert.equal(existsSync(join(state, 'replica-1', 'host.json')), false, 'a clean stop removes its record');

    // C takes the first free slot (A's) and adopts B's.
    receiver.up = true;
    const c = await serve();
    assert.equal(record('replica-1').pid, c.child.pid);
    await until(() => receiver.statuses(open).length > 0 && receiver.statuses(spooled).length > 0, "B's records");
    assert.deepEqual(receiver.statuses(open), ['interrupted']);
    assert.deepEqual(receiver.statuses(spooled), ['completed']);
    assert.equal(existsSync(join(state, 'replica-2', 'usage-runs', `${open}.json`)), false);
    assert.equal(existsSync(join(state, 'replica-2', 'host.json')), false, "the dead replica's record went with it");
    c.child.kill('SIGTERM');
    assert.equal(await c.exited, 0);
  });
});
