/**
 * Process supervision and readiness with stub executables: grandchildren never outlive a
 * run, output is bounded, the host's secrets never reach a CLI, and readiness failures are
 * typed before any prompt is sent.
 */
import assert from 'node:assert/strict';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { DriverError } from '../../../src/protocol/errors.js';
import { childEnvironment } from '../../../src/providers/cli/environment.js';
import { runCli } from '../../../src/providers/cli/process.js';
import { claudeCode, codex, CodexProviderConfig, geminiCli } from '../../../src/providers/cli/index.js';
import { drain, request, scratchDirectory } from './harness.js';

let scratch: { path: string; remove(): Promise<void> };
before(async () => {
  scratch = await scratchDirectory('supervision');
});
after(() => scratch.remove());

/** Waits until `pid` is gone (a zombie awaiting its reaper counts as gone); false after 3 s. */
async function gone(pid: number): Promise<boolean> {
  for (const deadline = Date.now() + 3_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 25))) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (stat === '' || / Z /.test(stat.slice(stat.lastIndexOf(')')))) return true;
  }
  return false;
}

async function stub(name: string, body: string): Promise<string> {
  const path = join(scratch.path, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

test('cancel kills the whole process group, including a backgrounded grandchild', async () => {
  const pidFile = join(scratch.path, 'grandchild.pid');
  const binary = await stub('hangs', `sleep 300 & echo $! > ${pidFile}; echo started; wait`);
  const controller = new AbortController();
  const lines: string[] = [];
  const run = (async () => {
    for await (const item of runCli({ binary, args: [], env, cwd: scratch.path, stdin: null, killGraceMs: 500 }, controller.signal)) {
      if (item.type === 'line') {
        lines.push(item.line);
        controller.abort(new Error('stop'));
      }
    }
  })();
  await assert.rejects(run, /stop/);
  assert.deepEqual(lines, ['started']);
  const grandchild = Number((await readFile(pidFile, 'utf8')).trim());
  assert.ok(await gone(grandchild), 'the grandchild is gone');
});

test('a grandchild left behind after a normal exit is swept', async () => {
  const pidFile = join(scratch.path, 'orphan.pid');
  const binary = await stub('leaves-orphan', `sleep 300 > /dev/null 2>&1 & echo $! > ${pidFile}; echo done`);
  const seen: string[] = [];
  for await (const item of runCli({ binary, args: [], env, cwd: scratch.path, stdin: null }, new AbortController().signal)) seen.push(item.type);
  assert.deepEqual(seen, ['line', 'exit']);
  const orphan = Number((await readFile(pidFile, 'utf8')).trim());
  assert.ok(await gone(orphan), 'the orphan is gone');
});

test('stdout+stderr beyond the limit → CLI_OUTPUT_LIMIT and the process is stopped', async () => {
  const binary = await stub('floods', 'yes flood');
  const run = async () => {
    for await (const _ of runCli({ binary, args: [], env, cwd: scratch.path, stdin: null, outputLimitBytes: 100_000 }, new AbortController().signal));
  };
  await assert.rejects(run, (error: DriverError) => error.code === 'CLI_OUTPUT_LIMIT');
});

test('the prompt goes to stdin, never to argv', async () => {
  const binary = await stub('echoes', 'echo "args:$*"; cat');
  const lines: string[] = [];
  for await (const item of runCli({ binary, args: ['--flag'], env, cwd: scratch.path, stdin: 'secret prompt\n' }, new AbortController().signal)) {
    if (item.type === 'line') lines.push(item.line);
  }
  assert.deepEqual(lines, ['args:--flag', 'secret prompt']);
});

test('the child environment is an allowlist: host API keys and tokens never pass', () => {
  const child = childEnvironment({
    host: { PATH: '/bin', LANG: 'C.UTF-8', OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k', GEMINI_API_KEY: 'k', AGENTICDRIVER_TOKEN: 't', GITHUB_TOKEN: 't', HOME: '/home/user' },
    home: '/private/home',
    tmpDir: '/private/tmp',
    configured: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:1', DISABLE_TELEMETRY: '0' },
    adapter: { DISABLE_TELEMETRY: '1' },
  });
  assert.deepEqual(child, {
    PATH: '/bin',
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:1',
    HOME: '/private/home',
    TMPDIR: '/private/tmp',
    TMP: '/private/tmp',
    TEMP: '/private/tmp',
    DISABLE_TELEMETRY: '1',
  });
});

test('missing binary → CLI_UNAVAILABLE for every kind, before any prompt is sent', async () => {
  for (const make of [codex, claudeCode, geminiCli]) {
    const { error } = await drain(make({ binary: join(scratch.path, 'not-installed'), models: ['m'], hostEnvironment: env }), request('hi', 'm'));
    assert.equal(error?.code, 'CLI_UNAVAILABLE');
  }
});

test('too-old binary → CLI_UPGRADE_REQUIRED naming the minimum version; the prompt never reaches it', async () => {
  const marker = join(scratch.path, 'prompted');
  const cases = [
    { make: codex, banner: 'codex-cli 0.100.0', minimum: '0.171.0' },
    { make: claudeCode, banner: '2.0.1 (Claude Code)', minimum: '2.1.332' },
    { make: geminiCli, banner: '0.40.0', minimum: '0.61.0' },
  ];
  for (const { make, banner, minimum } of cases) {
    const binary = await stub(`old-${minimum}`, `if [ "$1" = "--version" ]; then echo "${banner}"; else touch ${marker}; fi`);
    const { error } = await drain(make({ binary, models: ['m'], hostEnvironment: env }), request('hi', 'm'));
    assert.equal(error?.code, 'CLI_UPGRADE_REQUIRED');
    assert.match(error.message, new RegExp(minimum.replace(/\./g, '\\.')));
  }
  await assert.rejects(readFile(marker), { code: 'ENOENT' });
});

test('tools need the runtime\'s mid-step tool caller: without it → UNSUPPORTED_TOOLS before anything starts', async () => {
  const adapter = codex({ binary: join(scratch.path, 'unused'), models: ['m'], hostEnvironment: env });
  assert.equal(adapter.info.capabilities.tools, true);
  const { error } = await drain(adapter, request('hi', 'm', { tools: [{ name: 'lookup', description: 'd', inputSchema: { type: 'object' } }] }));
  assert.equal(error?.code, 'UNSUPPORTED_TOOLS');
});

test('the config entry is strict', () => {
  assert.ok(Value.Check(CodexProviderConfig, { kind: 'codex', id: 'codex', models: ['gpt-5.5'], accountDirectory: '/srv/codex', environment: { OPENAI_BASE_URL: 'x', KEY: { env: 'K' } } }));
  assert.ok(!Value.Check(CodexProviderConfig, { kind: 'codex', id: 'codex', models: [], shell: true }));
  assert.ok(!Value.Check(CodexProviderConfig, { kind: 'codex', id: 'codex' }));
  assert.ok(!Value.Check(CodexProviderConfig, { kind: 'codex', id: 'codex', models: [], environment: { 'BAD-NAME': 'x' } }));
  assert.ok(Value.Check(CodexProviderConfig, { kind: 'codex', id: 'codex', models: [], warm: { processes: 2, idleSeconds: 60 } }));
  for (const warm of [{ processes: 0 }, { processes: 9 }, { processes: 1, idleSeconds: 0 }, { processes: 1, extra: true }]) {
    assert.ok(!Value.Check(CodexProviderConfig, { kind: 'codex', id: 'codex', models: [], warm }), JSON.stringify(warm));
  }
});
