/**
 * Job changes travel on the store's signal bus (LISTEN/NOTIFY on PostgreSQL): a replica hears
 * that another queued a job, appended to a job's log, or was asked to cancel, and a follower
 * of a job wakes on the announcement — not on a polling interval (the fallback here is an
 * hour: a follower that waited for it would time the test out).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { follow } from '../../src/extensions/jobs/stream.js';
import type { RunEvent } from '../../src/protocol/schemas.js';
import type { JobChange, JobStore, StateStore } from '../../src/store/store.js';
import { freshDatabase } from '../support/postgres.js';
import { openPostgresStore } from '../support/stores.js';

const HOUR = 3_600_000;
const request = { provider: 'mock', model: 'demo', input: 'hi' };
const submission = (key: string) => ({ subject: 'someone', key, fingerprint: key, tokenId: 'main', request: request as never, retentionMs: 60_000, maxJobs: 10, maxJobsPerSubject: 10 });

function heard(store: StateStore): { changes: JobChange[]; next(kind: JobChange['kind']): Promise<JobChange> } {
  const changes: JobChange[] = [];
  const waiting: { kind: string; resolve(change: JobChange): void }[] = [];
  store.jobs.onChange((change) => {
    changes.push(change);
    for (const waiter of waiting.filter((item) => item.kind === change.kind)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve(change);
    }
  });
  return {
    changes,
    next: (kind) => {
      const found = changes.find((change) => change.kind === kind);
      if (found) {
        changes.splice(changes.indexOf(found), 1);
        return Promise.resolve(found);
      }
      return new Promise((resolve) => waiting.push({ kind, resolve }));
    },
  };
}

describe('job changes between PostgreSQL replicas', () => {
  it('announces a queued job, a grown log and a cancel to the other replica', async () => {
    const database = await freshDatabase();
    const a = await openPostgresStore(database.url);
    const b = await openPostgresStore(database.url);
    try {
      const onA = heard(a);
      const { job } = await b.jobs.submit(submission('one'));
      assert.deepEqual(await onA.next('queued'), { kind: 'queued', id: job.info.id });
      const claimed = await b.jobs.claim();
      assert.equal(claimed?.info.id, job.info.id);
      const started: RunEvent = { type: 'run.started', runId: job.info.runId, sequence: 1, timestamp: new Date().toISOString(), provider: 'mock', model: 'demo' };
      await b.jobs.append(job.info.id, started, 1_000_000);
      assert.deepEqual(await onA.next('events'), { kind: 'events', id: job.info.id });
      await a.jobs.cancel(job.info.id);
      assert.deepEqual(await onA.next('cancel'), { kind: 'cancel', id: job.info.id }, 'every replica, the asking one included, hears it');
    } finally {
      await b.close();
      await a.close();
      await database.drop();
    }
  });
});

describe('following a job', () => {
  /** A job store whose log the test grows by hand, announcing each event (or not). */
  function fakeJobs() {
    const log: RunEvent[] = [];
    const listeners = new Set<(change: JobChange) => void>();
    let duringRead: (() => void) | undefined;
    const jobs: Pick<JobStore, 'events' | 'onChange'> = {
      events: async (_id, after) => {
        const page = log.filter((event) => event.sequence > after);
        // What commits while this read is on its way is announced before the read answers.
        const hook = duringRead;
        duringRead = undefined;
        hook?.();
        return page;
      },
      onChange: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    const append = (type: RunEvent['type']) => {
      log.push({ type, runId: 'r', sequence: log.length + 1, timestamp: new Date().toISOString() } as RunEvent);
      for (const listener of listeners) listener({ kind: 'events', id: 'job' });
    };
    return { jobs, append, listeners, whileReading: (hook: () => void) => (duringRead = hook) };
  }

  it('wakes on the announcement that the log grew, including one made while it was reading', async () => {
    const store = fakeJobs();
    const stop = new AbortController();
    const events = follow(store.jobs, 'job', 0, stop.signal, HOUR);
    store.append('run.started');
    assert.equal((await events.next()).value?.type, 'run.started');
    // The follower now finds nothing and waits; an event then arrives, announced.
    const next = events.next();
    await new Promise((resolve) => setImmediate(resolve));
    store.append('step.started');
    assert.equal((await next).value?.type, 'step.started');
    // This one commits while the follower's read is on its way (after the read took its page).
    store.whileReading(() => store.append('text.delta'));
    const third = events.next();
    assert.equal((await third).value?.type, 'text.delta');
    store.append('run.completed');
    assert.equal((await events.next()).value?.type, 'run.completed');
    assert.equal((await events.next()).done, true, 'the terminal event ends the follow');
    assert.equal(store.listeners.size, 0, 'the follower stopped listening');
  });

  it('stops waiting when its client goes away', async () => {
    const store = fakeJobs();
    const stop = new AbortController();
    const events = follow(store.jobs, 'job', 0, stop.signal, HOUR);
    const next = events.next();
    await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    assert.equal((await next).done, true);
    assert.equal(store.listeners.size, 0);
  });
});
