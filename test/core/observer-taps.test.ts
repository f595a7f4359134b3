/**
 * Observers' taps on a run's events (`Observers.run`): every tap sees every event once, in the
 * order the observers were added (the caller's own tap first), before the consumer has it; a
 * promise a tap returns holds the event until it settles; `end` is told once, with the error
 * when the events threw, without one when the consumer stopped early.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Observers, type ObservedRun, type RunTap } from '../../src/http/observers.js';
import type { RunEvent } from '../../src/protocol/schemas.js';

const RUN: ObservedRun = { request: { provider: 'mock', model: 'demo', input: 'hi' } as ObservedRun['request'], vendor: 'mock', subject: 'alice' };
const event = (sequence: number, type = 'text.delta') => ({ type, runId: 'r1', sequence, timestamp: '2026-12-03T09:00:00.000Z', text: `t${sequence}` }) as unknown as RunEvent;

async function* events(list: RunEvent[], failAfter?: number): AsyncGenerator<RunEvent> {
  for (const [index, item] of list.entries()) {
    if (index === failAfter) throw new Error('the run broke');
    yield item;
  }
}

function recordingTap(name: string, log: string[]): RunTap {
  return {
    event: (seen) => void log.push(`${name}:${seen.sequence}`),
    end: (failure) => void log.push(`${name}:end${failure ? `:${(failure.error as Error).message}` : ''}`),
  };
}

describe('observer taps', () => {
  it('calls every tap once per event, in order, before the consumer; end once after the last', async () => {
    const log: string[] = [];
    const observers = new Observers();
    observers.add({ tap: () => recordingTap('a', log) });
    observers.add({ usage: () => undefined });
    observers.add({ tap: () => recordingTap('b', log) });
    for await (const seen of observers.run(events([event(1), event(2), event(3, 'run.completed')]), RUN, recordingTap('first', log))) log.push(`consumer:${seen.sequence}`);
    assert.deepEqual(log, [
      'first:1', 'a:1', 'b:1', 'consumer:1',
      'first:2', 'a:2', 'b:2', 'consumer:2',
      'first:3', 'a:3', 'b:3', 'consumer:3',
      'first:end', 'a:end', 'b:end',
    ]);
  });

  it('holds an event while a tap\'s promise is pending', async () => {
    let release: (() => void) | undefined;
    const observers = new Observers();
    observers.add({ tap: () => ({ event: (seen) => (seen.sequence === 2 ? new Promise<void>((resolve) => (release = resolve)) : undefined) }) });
    const iterator = observers.run(events([event(1), event(2), event(3)]), RUN);
    assert.equal((await iterator.next()).value?.sequence, 1);
    let second: IteratorResult<RunEvent> | undefined;
    const pending = iterator.next().then((result) => (second = result));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(second, undefined, 'event 2 waits for the tap');
    release!();
    await pending;
    assert.equal(second!.value?.sequence, 2);
    await iterator.return(undefined);
  });

  it('tells end the error when the events throw, and nothing when the consumer stops early', async () => {
    const log: string[] = [];
    const observers = new Observers();
    observers.add({ tap: () => recordingTap('a', log) });
    await assert.rejects(async () => {
      for await (const _ of observers.run(events([event(1), event(2)], 1), RUN)) void _;
    }, /the run broke/);
    assert.deepEqual(log, ['a:1', 'a:end:the run broke']);

    log.length = 0;
    for await (const seen of observers.run(events([event(1), event(2)]), RUN)) if (seen.sequence === 1) break;
    assert.deepEqual(log, ['a:1', 'a:end']);
  });

  it('makes no tap for a run an observer declines', async () => {
    const log: string[] = [];
    const observers = new Observers();
    observers.add({ tap: (run) => (run.jobId ? recordingTap('jobs-only', log) : undefined) });
    const seen: number[] = [];
    for await (const item of observers.run(events([event(1), event(2)]), RUN)) seen.push(item.sequence);
    assert.deepEqual(seen, [1, 2]);
    assert.deepEqual(log, []);
    for await (const item of observers.run(events([event(3)]), { ...RUN, jobId: 'j1' })) seen.push(item.sequence);
    assert.deepEqual(log, ['jobs-only:3', 'jobs-only:end']);
  });
});
