/**
 * The SQLite store's writes are durable before they are done, with the disk flush off the event
 * loop: a commit leaves SQLite at once (`synchronous = NORMAL`), and the write's promise — and
 * the signals its commit publishes — wait for the flush of the log, which runs in the thread
 * pool while other statements go on. Writes arriving during a flush share the next one.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteEngine } from '../../src/store/sqlite/sqlite-engine.js';
import { openSqliteEngine } from '../../src/store/sqlite/sqlite-store.js';
import { WalSync } from '../../src/store/sqlite/wal-sync.js';
import { tempDir } from '../support/temp.js';

/** A flush that waits until the test lets it finish. */
function gatedFlushes() {
  const gates: (() => void)[] = [];
  let started: (() => void) | undefined;
  return {
    flush: () => new Promise<void>((resolve) => {
      gates.push(resolve);
      started?.();
    }),
    count: () => gates.length,
    /** Resolves once the n-th flush has started. */
    started: (n: number) => new Promise<void>((resolve) => {
      if (gates.length >= n) return resolve();
      started = () => gates.length >= n && resolve();
    }),
    release: (n: number) => gates[n - 1]!(),
  };
}

/** Whether `promise` has settled once the current turn's work is done. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('SQLite writes made durable off the event loop', () => {
  it('opens the store file with synchronous = NORMAL and a log flushed before each write is done', async () => {
    const engine = openSqliteEngine(join(tempDir('wal-sync-'), 'state.db'));
    try {
      assert.deepEqual(await engine.all('PRAGMA synchronous'), [{ synchronous: 1 }]);
      assert.deepEqual(await engine.all('PRAGMA journal_mode'), [{ journal_mode: 'wal' }]);
      await engine.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
      await engine.transaction((tx) => tx.run('INSERT INTO t (id) VALUES (1)'));
      assert.deepEqual(await engine.all('SELECT id FROM t'), [{ id: 1 }]);
    } finally {
      await engine.close();
    }
  });

  it('resolves a write only after a flush that started after it, and serves other statements meanwhile', async () => {
    const path = join(tempDir('wal-sync-'), 'state.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const flushes = gatedFlushes();
    const engine = new SqliteEngine(db, new WalSync(`${path}-wal`, flushes.flush));
    try {
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
      const signals: string[] = [];
      await engine.subscribe('changes', (payload) => signals.push(payload));

      const first = engine.transaction(async (tx) => {
        await tx.run('INSERT INTO t (id) VALUES (1)');
        await tx.publish('changes', 'first');
      });
      await flushes.started(1);
      assert.equal(await settled(first), false, 'the first commit waits for its flush');
      // The lock is free: a read and further writes go on while the log is flushed.
      assert.deepEqual(await engine.all('SELECT id FROM t'), [{ id: 1 }]);
      const second = engine.transaction((tx) => tx.run('INSERT INTO t (id) VALUES (2)'));
      const third = engine.run('INSERT INTO t (id) VALUES (3)');
      assert.deepEqual(await engine.all('SELECT id FROM t ORDER BY id'), [{ id: 1 }, { id: 2 }, { id: 3 }]);
      assert.equal(flushes.count(), 1, 'one flush at a time');

      flushes.release(1);
      await first;
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(signals, ['first'], 'the commit is announced once it is durable');
      // The first flush may have started before the later writes: they wait for one more, shared.
      await flushes.started(2);
      assert.equal(await settled(second), false);
      assert.equal(await settled(third), false);
      flushes.release(2);
      await Promise.all([second, third]);
      assert.equal(flushes.count(), 2);
      // A read needs no flush.
      await engine.all('SELECT COUNT(*) AS n FROM t');
      assert.equal(flushes.count(), 2);
    } finally {
      const closing = engine.close();
      await closing;
    }
  });
});
