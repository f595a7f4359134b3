/**
 * The SqlEngine contract, one suite against both engines (SQLite and a real PostgreSQL),
 * then what only PostgreSQL has: replicas on one database, a LISTEN connection that comes
 * back, and a server that cannot be reached.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { SqlEngine } from '../../src/store/sql/engine.js';
import { PostgresEngine, StoreUnavailableError, toPositional } from '../../src/store/postgres/postgres-engine.js';
import { SqliteEngine } from '../../src/store/sqlite/sqlite-engine.js';
import { freshDatabase, terminateBackend } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';

const root = new URL('../..', import.meta.url).pathname;

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Opened {
  engine: SqlEngine;
  cleanup(): Promise<void>;
}

const engines: Array<{ name: string; open(): Promise<Opened> }> = [
  {
    name: 'sqlite',
    async open() {
      const engine = new SqliteEngine(new Database(join(tempDir('engine-'), 'state.db')));
      return { engine, cleanup: () => engine.close() };
    },
  },
  {
    name: 'postgres',
    async open() {
      const database = await freshDatabase();
      const engine = await PostgresEngine.connect(database.url, { max: 4 });
      return {
        engine,
        async cleanup() {
          await engine.close();
          await database.drop();
        },
      };
    },
  },
];

const SCHEMA = `
  CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT NOT NULL, size BIGINT NOT NULL);
  CREATE TABLE counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL)
`;

for (const { name, open } of engines) {
  describe(`SqlEngine: ${name}`, () => {
    let engine: SqlEngine;
    let cleanup: () => Promise<void>;

    before(async () => {
      ({ engine, cleanup } = await open());
      await engine.exec(SCHEMA);
    });
    after(() => cleanup());

    it('binds ? placeholders in order, nulls and strings with quotes included', async () => {
      assert.equal(engine.dialect, name);
      await engine.run('INSERT INTO items (id, name, size) VALUES (?, ?, ?)', [1, "it's ?", 10]);
      await engine.run('INSERT INTO items (id, name, size) VALUES (?, ?, ?)', [2, 'two', 20]);
      const rows = await engine.all<{ id: number; name: string }>('SELECT id, name FROM items WHERE size > ? AND name <> ? ORDER BY id', [5, 'two']);
      assert.deepEqual(rows, [{ id: 1, name: "it's ?" }]);
      assert.deepEqual(await engine.all('SELECT id FROM items WHERE id = ? AND name IS DISTINCT FROM ?', [2, null]), [{ id: 2 }]);
    });

    it('returns BIGINT columns, COUNT and SUM as numbers', async () => {
      await engine.run('INSERT INTO items (id, name, size) VALUES (?, ?, ?)', [3, 'big', 2 ** 40]);
      const [row] = await engine.all<{ size: number; count: number; total: number }>(
        'SELECT (SELECT size FROM items WHERE id = ?) AS size, COUNT(*) AS count, SUM(size) AS total FROM items',
        [3],
      );
      assert.deepEqual(row, { size: 2 ** 40, count: 3, total: 2 ** 40 + 30 });
    });

    it('returns rows from RETURNING and counts changes', async () => {
      const rows = await engine.all<{ id: number; size: number }>('INSERT INTO items (id, name, size) VALUES (?, ?, ?) RETURNING id, size', [4, 'four', 40]);
      assert.deepEqual(rows, [{ id: 4, size: 40 }]);
      assert.deepEqual(await engine.run('UPDATE items SET size = size + 1 WHERE id IN (?, ?)', [1, 4]), { changes: 2 });
      assert.deepEqual(await engine.run('DELETE FROM items WHERE id = ?', [999]), { changes: 0 });
    });

    it('skips a duplicate with ON CONFLICT DO NOTHING (changes 0, no rows returned)', async () => {
      assert.deepEqual(await engine.run('INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', ['a', 1]), { changes: 1 });
      assert.deepEqual(await engine.run('INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', ['a', 2]), { changes: 0 });
      assert.deepEqual(await engine.all('INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING RETURNING name', ['a', 3]), []);
      assert.deepEqual(await engine.all('SELECT value FROM counters WHERE name = ?', ['a']), [{ value: 1 }]);
    });

    it('commits a transaction that resolves and rolls back one that throws', async () => {
      const result = await engine.transaction(async (tx) => {
        await tx.run('INSERT INTO counters (name, value) VALUES (?, ?)', ['committed', 1]);
        return (await tx.all<{ value: number }>('SELECT value FROM counters WHERE name = ?', ['committed']))[0]?.value;
      });
      assert.equal(result, 1);
      await assert.rejects(
        engine.transaction(async (tx) => {
          await tx.run('INSERT INTO counters (name, value) VALUES (?, ?)', ['rolled back', 1]);
          await tx.run('UPDATE counters SET value = 99 WHERE name = ?', ['committed']);
          throw new Error('boom');
        }),
        /boom/,
      );
      const rows = await engine.all<{ name: string; value: number }>('SELECT name, value FROM counters WHERE name IN (?, ?) ORDER BY name', ['committed', 'rolled back']);
      assert.deepEqual(rows, [{ name: 'committed', value: 1 }]);
    });

    it('delivers a signal published in a transaction only after the commit, never after a rollback', async () => {
      const seen: string[] = [];
      await engine.subscribe('tx_signals', (payload) => seen.push(payload));
      await assert.rejects(
        engine.transaction(async (tx) => {
          await tx.publish('tx_signals', 'rolled back');
          throw new Error('undo');
        }),
        /undo/,
      );
      await engine.transaction(async (tx) => {
        await tx.publish('tx_signals', 'committed');
        await pause(100);
        assert.deepEqual(seen, [], 'nothing is delivered before the commit');
      });
      await waitFor(() => seen.length > 0, 'the committed signal');
      await engine.publish('tx_signals', 'outside');
      await waitFor(() => seen.length > 1, 'the signal published outside a transaction');
      await pause(100);
      assert.deepEqual(seen, ['committed', 'outside']);
    });
  });
}

describe('PostgresEngine', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let a: PostgresEngine;
  let b: PostgresEngine;

  before(async () => {
    database = await freshDatabase();
    a = await PostgresEngine.connect(database.url, { max: 3 });
    b = await PostgresEngine.connect(database.url, { max: 3 });
    await a.exec('CREATE TABLE notes (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL); CREATE INDEX notes_body ON notes (body)');
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('numbers ? placeholders as $1..$n', () => {
    assert.equal(toPositional('SELECT ? , ?, (?)'), 'SELECT $1 , $2, ($3)');
    assert.equal(toPositional('SELECT 1'), 'SELECT 1');
  });

  it('delivers between two engines (two replicas) on one database, to the publisher too', async () => {
    const onA: string[] = [];
    const onB: string[] = [];
    await a.subscribe('replicas', (payload) => onA.push(payload));
    await b.subscribe('replicas', (payload) => onB.push(payload));
    await a.publish('replicas', 'from a');
    await b.transaction(async (tx) => {
      await tx.run('INSERT INTO notes (body) VALUES (?)', ['from b']);
      await tx.publish('replicas', 'from b');
    });
    await waitFor(() => onA.length === 2 && onB.length === 2, 'both signals on both replicas');
    assert.deepEqual(onA, ['from a', 'from b']);
    assert.deepEqual(onB, ['from a', 'from b']);
    assert.deepEqual(await a.all('SELECT body FROM notes'), [{ body: 'from b' }], 'the other replica sees the committed row');
  });

  it('listens again after its LISTEN connection is terminated, on every channel', async () => {
    const first: string[] = [];
    const second: string[] = [];
    await a.subscribe('cut_one', (payload) => first.push(payload));
    await a.subscribe('cut_two', (payload) => second.push(payload));
    const before = await a.listenerPid();
    await terminateBackend(before);
    // Until the engine notices the cut, asking the old connection for its pid fails: keep polling.
    const reconnected = async () => a.listening && (await a.listenerPid().catch(() => before)) !== before;
    await waitFor(reconnected, 'a new LISTEN connection');
    await b.publish('cut_one', 'one');
    await b.publish('cut_two', 'two');
    await waitFor(() => first.length === 1 && second.length === 1, 'signals after the reconnect');
    assert.deepEqual([first, second], [['one'], ['two']]);
  });

  it('survives its pooled connections being terminated: the next statement gets a new one', async () => {
    await a.all('SELECT 1');
    await terminateBackendsOf(b, database.name);
    await pause(50);
    assert.deepEqual(await a.all<{ n: number }>('SELECT 2::bigint AS n'), [{ n: 2 }]);
  });

  it('ends a transaction a stalled replica left idle: its row locks stop blocking the other replicas', async () => {
    // A replica whose sessions end a transaction idle for 1 s (a host's default is its lease).
    const stalling = await PostgresEngine.connect(database.url, { max: 1, idleTransactionTimeoutMs: 1000 });
    await a.run('INSERT INTO notes (id, body) VALUES (?, ?)', [200, 'held']);
    let wake!: () => void;
    const stalled = new Promise<void>((resolve) => (wake = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const held = stalling.transaction(async (tx) => {
      await tx.run('UPDATE notes SET body = ? WHERE id = ?', ['stalled', 200]);
      locked();
      // The replica stops here, inside its transaction, holding the row lock.
      await stalled;
      await tx.run('UPDATE notes SET body = ? WHERE id = ?', ['too late', 200]);
    });
    await lockTaken;
    // Waits on the row lock until the server ends the idle transaction.
    assert.equal((await b.run('UPDATE notes SET body = ? WHERE id = ?', ['reaped', 200])).changes, 1);
    wake();
    await assert.rejects(held, StoreUnavailableError);
    assert.deepEqual(await b.all('SELECT body FROM notes WHERE id = ?', [200]), [{ body: 'reaped' }]);
    await stalling.close();
  });

  it('refuses a nested transaction, as the SQLite engine does', async () => {
    await a.transaction(async (tx) => {
      await tx.run('INSERT INTO notes (body) VALUES (?)', ['outer']);
      await assert.rejects(
        tx.transaction(async () => undefined),
        /do not nest/,
      );
    });
    assert.deepEqual(await a.all('SELECT body FROM notes WHERE body = ?', ['outer']), [{ body: 'outer' }]);
  });

  it('passes SQL errors through with their SQLSTATE, and refuses a tx used after it ended', async () => {
    await assert.rejects(a.run('INSERT INTO notes (id, body) VALUES (?, ?), (?, ?)', [100, 'x', 100, 'y']), (error: Error & { code?: string }) => error.code === '23505');
    let leaked: SqlEngine | undefined;
    await a.transaction(async (tx) => {
      leaked = tx;
    });
    await assert.rejects(leaked!.all('SELECT 1'), /transaction is over/);
  });

  it('refuses channel names that are not plain identifiers and payloads over 7,000 bytes', async () => {
    await assert.rejects(a.subscribe('Bad-Channel', () => {}), TypeError);
    await assert.rejects(a.publish('x; DROP TABLE notes', 'p'), TypeError);
    await assert.rejects(a.publish('ok', 'x'.repeat(7001)), RangeError);
  });

  it('throws StoreUnavailableError, without the password, when the server cannot be reached', async () => {
    const down = 'postgres://postgres:s3cret-password@127.0.0.1:1/postgres';
    await assert.rejects(PostgresEngine.connect(down), (error: Error) => {
      assert.ok(error instanceof StoreUnavailableError, String(error));
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
    const wrongPassword = new URL(database.url);
    wrongPassword.password = 'not-the-password';
    await assert.rejects(PostgresEngine.connect(wrongPassword.toString()), StoreUnavailableError);
    await assert.rejects(PostgresEngine.connect('postgres://u:p@[bad'), /not valid|unavailable/);
  });

  it('throws, and does not crash, when its database goes away while in use', async () => {
    const doomed = await freshDatabase();
    const engine = await PostgresEngine.connect(doomed.url, { max: 2 });
    await engine.subscribe('doomed', () => {});
    await doomed.drop();
    await assert.rejects(engine.all('SELECT 1'));
    await assert.rejects(engine.transaction(async (tx) => tx.all('SELECT 1')));
    await pause(300); // the listener's reconnect attempts fail quietly
    await engine.close();
  });

  it('lets the process exit after close(): no open handles', async () => {
    const script = `
      import { PostgresEngine } from './src/store/postgres/postgres-engine.ts';
      const engine = await PostgresEngine.connect(process.env.URL);
      await engine.subscribe('exit_check', () => {});
      await engine.transaction(async (tx) => tx.publish('exit_check', 'x'));
      await engine.all('SELECT 1');
      await engine.close();
      await engine.close();
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      env: { ...process.env, URL: database.url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
    clearTimeout(timer);
    assert.deepEqual({ code, signal, stderr }, { code: 0, signal: null, stderr: '' });
  });
});

async function terminateBackendsOf(engine: PostgresEngine, databaseName: string): Promise<void> {
  await engine.all('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()', [databaseName]);
}
