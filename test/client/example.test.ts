/** docs/client.md promises that examples/client/hello.ts runs as is; this keeps the promise. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { it } from 'node:test';
import { promisify } from 'node:util';

const root = new URL('../..', import.meta.url).pathname;

it('runs examples/client/hello.ts against its own throwaway host', async () => {
  const env = { ...process.env };
  delete env.AGENTICDRIVER_URL;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/client/hello.ts'], { cwd: root, env, timeout: 60_000 });
  assert.match(stdout, /host speaks agenticdriver 1\.0/);
  assert.match(stdout, /stream: Hello, streaming world {2}\[stop, 1 step\]/);
  assert.match(stdout, /run: Hello, buffered world/);
  assert.match(stdout, /stopped after: first words/);
  assert.match(stdout, /typed error: FORBIDDEN/);
});
