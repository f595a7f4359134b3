/** The extraction threads' line (issue 25, item 3): fair between subjects, deterministic. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FairQueue } from '../../../src/extensions/retrieval/ingestion/fair-queue.js';
import { DriverError } from '../../../src/protocol/errors.js';

/** Acquires for `key`, recording `label` when granted. */
function take(queue: FairQueue, key: string, label: string, order: string[], signal?: AbortSignal): Promise<() => void> {
  return queue.acquire(key, signal).then((release) => {
    order.push(label);
    return release;
  });
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('FairQueue', () => {
  it("serves the waiting subject that holds the fewest places first, so one subject's line never holds back another's", async () => {
    const queue = new FairQueue(1);
    const order: string[] = [];
    const first = await take(queue, 'a', 'a1', order);
    // Each of these gives its place back as soon as it has it.
    const waiting = [['a', 'a2'], ['a', 'a3'], ['b', 'b1'], ['c', 'c1'], ['b', 'b2']].map(([key, label]) => take(queue, key!, label!, order).then((release) => release()));
    assert.deepEqual(queue.stats, { held: 1, waiting: 5, waitingKeys: 3 });
    first();
    await Promise.all(waiting);
    // The turn goes round: a, b, c, then a and b again.
    assert.deepEqual(order, ['a1', 'a2', 'b1', 'c1', 'a3', 'b2']);
    assert.deepEqual(queue.stats, { held: 0, waiting: 0, waitingKeys: 0 });
  });

  it('holds one key to perKey places: a key that holds none takes the spare place at once', async () => {
    const queue = new FairQueue(2, 1);
    const order: string[] = [];
    const a1 = await take(queue, 'a', 'a1', order);
    const a2 = take(queue, 'a', 'a2', order);
    await settle();
    assert.deepEqual(order, ['a1'], 'a second place for a waits although one is free');
    const b1 = await take(queue, 'b', 'b1', order);
    assert.deepEqual(queue.stats, { held: 2, waiting: 1, waitingKeys: 1 });
    b1();
    await settle();
    assert.deepEqual(order, ['a1', 'b1'], 'a still holds its one place');
    a1();
    (await a2)();
    assert.deepEqual(order, ['a1', 'b1', 'a2']);
    assert.equal(queue.heldByKey('a'), 0);
  });

  it('lets an aborted waiter leave the line with its reason, and a release twice is one release', async () => {
    const queue = new FairQueue(1);
    const order: string[] = [];
    const held = await take(queue, 'a', 'a1', order);
    const controller = new AbortController();
    const leaving = take(queue, 'b', 'b1', order, controller.signal);
    const staying = take(queue, 'c', 'c1', order);
    controller.abort(new DriverError('IDLE_TIMEOUT', 'idle'));
    await assert.rejects(leaving, { code: 'IDLE_TIMEOUT' });
    await assert.rejects(queue.acquire('d', AbortSignal.abort()), { code: 'CANCELLED' });
    held();
    held();
    (await staying)();
    assert.deepEqual(order, ['a1', 'c1']);
    assert.deepEqual(queue.stats, { held: 0, waiting: 0, waitingKeys: 0 });
  });
});
