/**
 * The CLI finds the host it belongs to (issue 26, item 1), against host processes started by the
 * real CLI. `serve --port 7533` served on 7533 while every client command dialled `listen.port`
 * from the config — and silently talked to whatever listened there. Commands now take the URL
 * the running host records in its state directory, and every connection error says which URL
 * was dialled, where it came from and how to change it.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLI_MAIN, cliAsync, errorOf, killAll, spawnHost } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

const TOKEN = 'host-address-token-0123456789abcdefghij';

/** A port nothing listens on (bound and released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the CLI finds the host it belongs to (issue 26, item 1)', () => {
  const dir = tempDir('agenticdriver-find-host-');
  const config = join(dir, 'config.json');
  const env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_ADDRESS_TOKEN: TOKEN };
  const children: ChildProcess[] = [];
  let decoy: Server;
  let decoyRequests = 0;
  let decoyPort = 0;
  const writeConfig = (port: number) =>
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [{ id: 'main', subject: 'ops', tokenRef: { env: 'AD_ADDRESS_TOKEN' }, providers: ['mock'], jobs: ['submit', 'read', 'cancel'] }],
        jobs: { retentionMs: 60_000 },
      }),
      { mode: 0o600 },
    );

  before(async () => {
    // Something else listens on the config's port, answering 200 to everything.
    decoy = createHttpServer((_request, response) => {
      decoyRequests += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => decoy.listen(0, '127.0.0.1', resolve));
    decoyPort = (decoy.address() as { port: number }).port;
    writeConfig(decoyPort);
  });
  after(async () => {
    killAll(children);
    decoy.closeAllConnections();
    await new Promise((resolve) => decoy.close(resolve));
  });

  it('dials the URL the running host recorded after serve --port, never the config port', async () => {
    const host = await spawnHost([CLI_MAIN, 'serve', '--config', config, '--port', '0', '--json'], env, children);
    assert.notEqual(new URL(host.url).port, String(decoyPort));
    const [status, run] = await Promise.all([
      cliAsync(['status', '--config', config, '--json'], env),
      cliAsync(['run', '--config', config, '--provider', 'mock', '--model', 'demo', '--input', 'found it'], env),
    ]);
    assert.equal(status.status, 0, status.stderr);
    assert.equal((JSON.parse(status.stdout) as { protocol: { version: string } }).protocol.version, '1.0');
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), 'found it');
    assert.equal(decoyRequests, 0, 'the decoy on the config port was never asked');

    // The recorded host stops answering (SIGSTOP): the error names its record and its pid.
    host.child.kill('SIGSTOP');
    try {
      const stuck = await cliAsync(['status', '--config', config], env);
      assert.equal(stuck.status, 1);
      const error = errorOf(stuck.stderr);
      assert.equal(error.code, 'TIMEOUT');
      assert.ok(error.message.includes(`${join(dir, 'state', 'host.json')}, written by the host running with this config (pid ${host.child.pid})`), error.message);
    } finally {
      host.child.kill('SIGCONT');
    }
    host.child.kill('SIGTERM');
    assert.equal(await host.exited, 0);
  });

  it('names where the URL came from and how to change it on every connection error', async () => {
    // No running host and something else on the config's port: the answer is not a host's, and
    // the error says the URL came from the config. And serve fails there with LISTEN_FAILED.
    const [wrongHost, listening] = await Promise.all([cliAsync(['status', '--config', config], env), cliAsync(['serve', '--config', config], env)]);
    const foreign = errorOf(wrongHost.stderr);
    assert.ok(decoyRequests > 0);
    assert.ok(foreign.message.includes(`The URL http://127.0.0.1:${decoyPort} comes from listen.host and listen.port in ${config}`), foreign.message);
    assert.ok(foreign.message.includes('no running host is recorded'), foreign.message);
    assert.ok(foreign.message.includes(`agenticdriver serve --config ${config}`), foreign.message);

    // LISTEN_FAILED (the decoy holds the config's port) names the setting and how to pick another.
    const busy = errorOf(listening.stderr);
    assert.equal(busy.code, 'LISTEN_FAILED');
    assert.ok(busy.message.includes(`the port from listen.port in ${config}`), busy.message);
    assert.ok(busy.message.includes('--port N (0 picks a free one)'), busy.message);

    // A host killed with -9 leaves its record: the CLI names the dead pid and falls back to the
    // config, here a closed port; --url names itself.
    const killed = await spawnHost([CLI_MAIN, 'serve', '--config', config, '--port', '0', '--json'], env, children);
    killed.child.kill('SIGKILL');
    await killed.exited;
    const closed = await freePort();
    writeConfig(closed);
    const [stale, flagged] = await Promise.all([
      cliAsync(['jobs', 'read', '--config', config, '00000000-0000-4000-8000-000000000000'], env),
      cliAsync(['status', '--config', config, '--url', `http://127.0.0.1:${closed}`], env),
    ]);
    const unreachable = errorOf(stale.stderr);
    assert.equal(unreachable.code, 'HOST_UNREACHABLE');
    assert.ok(unreachable.message.includes(`The URL http://127.0.0.1:${closed} comes from listen.host and listen.port in ${config}`), unreachable.message);
    assert.ok(unreachable.message.includes(`names pid ${killed.child.pid}, which is not running`), unreachable.message);
    const fromFlag = errorOf(flagged.stderr);
    assert.equal(fromFlag.code, 'HOST_UNREACHABLE');
    assert.ok(fromFlag.message.includes(`The URL http://127.0.0.1:${closed} comes from --url`), fromFlag.message);
    assert.match(JSON.parse(readFileSync(join(dir, 'state', 'host.json'), 'utf8')).url as string, /^http:\/\/127\.0\.0\.1:\d+$/, 'the dead host left its record');
  });
});
