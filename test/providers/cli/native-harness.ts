/** Runs through a real host for the native tool profile suites, answering each approval over HTTP. */
import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import type { HostTool } from '../../../src/runtime/tools.js';
import { sseEvents, type TestHost } from '../../support/host.js';

export const INTERACTIVE = { mode: 'interactive', idlePolicy: 'pause' };

export const exists = (path: string) => access(path).then(() => true, () => false);

/** Streams a run, answering each `approval.requested` with `decision`; returns every event. */
export async function runDeciding(host: TestHost, body: Record<string, unknown>, decision?: 'approve' | 'deny'): Promise<Record<string, any>[]> {
  const response = await host.post('/v1/runs', body, { accept: 'text/event-stream' });
  assert.equal(response.status, 200);
  const events: Record<string, any>[] = [];
  for await (const event of sseEvents(response)) {
    events.push(event);
    if (event.type !== 'approval.requested' || !decision) continue;
    const approval = event.approval as Record<string, unknown>;
    const decided = await fetch(`${host.url}/v1/approvals/decisions`, {
      method: 'POST',
      headers: host.headers(),
      body: JSON.stringify({ approvalId: approval.approvalId, runId: approval.runId, call: approval.call, decision }),
    });
    assert.equal(decided.status, 200, await decided.text());
  }
  return events;
}

/** A host tool, to check that a profile run still reaches the run's tools through the bridge. */
export const lookupTool: HostTool = {
  name: 'lookup',
  description: 'Looks a key up.',
  inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'], additionalProperties: false },
  execute: (input) => ({ value: `value-of-${String(input.key)}` }),
};

/** Refused without asking anyone: no relay, and the CLI took no further model turn. */
export function expectRefusedUnasked(events: Record<string, any>[], modelTurns: number): void {
  assert.equal(events.at(-1)!.type, 'run.failed');
  assert.equal(events.at(-1)!.error.code, 'CLI_POLICY_VIOLATION');
  assert.ok(!events.some((event) => event.type === 'approval.requested'));
  assert.equal(modelTurns, 1, 'no model turn after the refusal');
}

/** Denied by the person deciding: the run fails and the CLI took no further model turn. */
export function expectDenied(events: Record<string, any>[], modelTurns: number): void {
  assert.equal(events.at(-1)!.type, 'run.failed');
  assert.equal(events.at(-1)!.error.code, 'APPROVAL_DENIED');
  assert.equal(events.find((event) => event.type === 'approval.resolved')!.resolution.outcome, 'denied');
  assert.equal(modelTurns, 1, 'no model turn after the denial');
}
