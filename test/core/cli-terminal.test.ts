/**
 * The built CLI as a person and as a script meet it (issue 26): tables at a terminal and JSON
 * when piped, readable errors, help for bare command groups, config errors that name the
 * field and the line, config edits (`providers`, `tokens`) and a host that applies them on
 * SIGHUP, `jobs list` / `sessions list`, and the revision `run --session` continues from.
 * Every command runs `dist/cli/main.js` as a process; terminal cases run under a pseudo-terminal.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { CLI_MAIN, cli, errorOf, stopChild, terminalCli } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

const json = (stdout: string) => JSON.parse(stdout) as any;

describe('the built CLI at a terminal and in a pipe', () => {
  const dir = tempDir('ad-cli-terminal-');
  const config = join(dir, 'config.json');
  let host: ChildProcess;
  let url: string;
  let pid: number;
  const hostLog: string[] = [];
  const logWaiters: (() => void)[] = [];

  /** Resolves with the first host log line (stderr, JSON) at or after `from` that `match` accepts. */
  async function logLine(from: number, match: (line: any) => boolean): Promise<any> {
    for (;;) {
      const found = hostLog.slice(from).map((line) => JSON.parse(line)).find(match);
      if (found) return found;
      await new Promise<void>((resolve) => logWaiters.push(resolve));
    }
  }

  /** Sends SIGHUP and resolves with the host's verdict on the reload. */
  async function reload(): Promise<any> {
    const from = hostLog.length;
    process.kill(pid, 'SIGHUP');
    return logLine(from, (line) => line.kind === 'config');
  }

  const client = () => ['--config', config, '--url', url];
  const original = () => json(readFileSync(config, 'utf8'));

  before(async () => {
    const init = cli(['init', '--config', config]);
    assert.equal(init.status, 0, init.stderr);
    host = spawn(process.execPath, [CLI_MAIN, 'serve', '--config', config, '--port', '0', '--json'], { env: { ...process.env, AGENTICDRIVER_CONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    createInterface({ input: host.stderr! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      hostLog.push(line);
      for (const wake of logWaiters.splice(0)) wake();
    });
    const first = await new Promise<string>((resolve) => createInterface({ input: host.stdout! }).once('line', resolve));
    ({ url, pid } = json(first));
  });

  // Wait for the host to be gone: it writes its state until it exits, and the folder is removed after.
  after(() => stopChild(host));

  describe('output', () => {
    it('bare agenticdriver and bare command groups print their help and exit 0', () => {
      for (const args of [[], ['jobs'], ['sessions'], ['providers'], ['tokens']]) {
        const result = cli(args);
        assert.equal(result.status, 0, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stdout, /^Usage: agenticdriver/, args.join(' '));
        assert.equal(result.stderr, '', args.join(' '));
      }
    });

    it('a mistake reads as sentences at a terminal and as one JSON line in a pipe', () => {
      const terminal = terminalCli(['statu']);
      assert.equal(terminal.status, 1);
      assert.match(terminal.output, /^error: unknown command 'statu'\n\(Did you mean status\?\)\n  \(INVALID_ARGUMENT\)\n$/);
      const piped = cli(['statu']);
      assert.equal(piped.status, 1);
      assert.equal(piped.stderr.trim().split('\n').length, 1);
      assert.equal(errorOf(piped.stderr).message, "unknown command 'statu' (Did you mean status?)");
      assert.ok(!piped.stderr.includes('\\n'), 'no escaped line break');
    });

    it('status is a table at a terminal, JSON when piped or asked', () => {
      const terminal = terminalCli(['status', ...client()]);
      assert.equal(terminal.status, 0, terminal.output);
      assert.match(terminal.output, new RegExp(`^host +${url.replaceAll('.', '\\.')} \\(protocol 1\\.0\\)$`, 'm'));
      assert.match(terminal.output, /^PROVIDER +VENDOR +HEALTH +MODELS$/m);
      assert.match(terminal.output, /^mock +mock +ready +demo$/m);
      assert.ok(!terminal.output.includes('{'), 'no JSON at a terminal');
      for (const args of [['status', ...client()], ['status', ...client(), '--json']]) {
        const piped = cli(args);
        assert.equal(piped.status, 0, piped.stderr);
        assert.deepEqual(json(piped.stdout).providers.map((provider: { id: string }) => provider.id), ['mock']);
      }
      assert.match(terminalCli(['status', ...client(), '--json']).output, /^\{"protocol":/);
    });

    it('doctor and audit are tables at a terminal, JSON when piped', () => {
      const doctor = terminalCli(['doctor', '--config', config]);
      assert.equal(doctor.status, 0, doctor.output);
      assert.match(doctor.output, /^PROVIDER +KIND +HEALTH +VERSION +MODELS$/m);
      assert.match(doctor.output, /^Every check passed\.$/m);
      assert.equal(json(cli(['doctor', '--config', config]).stdout).ok, true);
      const audit = terminalCli(['audit', '--config', config]);
      assert.equal(audit.status, 0, audit.output);
      assert.match(audit.output, /^No approval has been requested yet\.$/m);
      assert.equal(cli(['audit', '--config', config]).stdout, '', 'no records: no JSON lines');
    });
  });

  describe('sessions and jobs', () => {
    it('run --session prints the revision to continue from; sessions list shows it', () => {
      const created = cli(['sessions', 'create', ...client(), '--provider', 'mock', '--model', 'demo']);
      assert.equal(created.status, 0, created.stderr);
      const id = json(created.stdout).session.id as string;
      const first = cli(['run', ...client(), '--provider', 'mock', '--model', 'demo', '--session', `${id}:0`, '--input', 'one']);
      assert.equal(first.status, 0, first.stderr);
      assert.equal(first.stdout, 'one\n', 'stdout keeps only the answer');
      assert.match(first.stderr, new RegExp(`continue with --session ${id}:1`));
      const second = cli(['run', ...client(), '--provider', 'mock', '--model', 'demo', '--session', `${id}:1`, '--input', 'two']);
      assert.match(second.stderr, new RegExp(`--session ${id}:2`));
      const listed = cli(['sessions', 'list', ...client()]);
      assert.equal(listed.status, 0, listed.stderr);
      assert.deepEqual(json(listed.stdout).sessions.map((session: { id: string; revision: number }) => [session.id, session.revision]), [[id, 2]]);
      const table = terminalCli(['sessions', 'list', ...client()]);
      assert.match(table.output, /^CONTINUE WITH --SESSION +STATE +MODE +PROVIDER +MODEL +UPDATED$/m);
      assert.match(table.output, new RegExp(`^${id}:2 +ready +history +mock +demo `, 'm'));
    });

    it('jobs list shows the subject\'s jobs, newest first, and filters by state', () => {
      const ids = ['job-a', 'job-b'].map((key) => {
        const submitted = cli(['jobs', 'submit', ...client(), '--key', key, '--provider', 'mock', '--model', 'demo', '--input', key, '--tail']);
        assert.equal(submitted.status, 0, submitted.stderr);
        return /^job (\S+)$/m.exec(submitted.stderr)![1]!;
      });
      const listed = json(cli(['jobs', 'list', ...client()]).stdout).jobs as { id: string; state: string }[];
      assert.deepEqual(listed.map((job) => [job.id, job.state]), [[ids[1], 'completed'], [ids[0], 'completed']]);
      assert.deepEqual(json(cli(['jobs', 'list', ...client(), '--state', 'queued']).stdout).jobs, []);
      assert.deepEqual(json(cli(['jobs', 'list', ...client(), '--limit', '1']).stdout).jobs.length, 1);
      assert.match(terminalCli(['jobs', 'list', ...client()]).output, /^ID +STATE +PROVIDER +MODEL +EVENTS +UPDATED$/m);
    });
  });

  describe('messages', () => {
    it('an unknown provider is "not configured, or not granted", still one answer either way', () => {
      const result = cli(['run', ...client(), '--provider', 'openai', '--model', 'gpt', '--input', 'hi']);
      assert.equal(result.status, 1);
      assert.deepEqual(errorOf(result.stderr), { code: 'FORBIDDEN', message: 'Provider openai is not configured on this host, or not granted to this token.', retryable: false });
    });

    it('a host URL without a scheme is a URL error, not a transport one', () => {
      const result = cli(['status', '--config', config, '--url', url.replace('http://', '')]);
      assert.equal(result.status, 1);
      assert.equal(errorOf(result.stderr).code, 'INVALID_URL');
    });
  });

  describe('config errors', () => {
    const configWith = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text, { mode: 0o600 });
      return path;
    };
    it('name the missing field of the kind that was meant, with its line and column', () => {
      const value = original();
      value.providers.push({ kind: 'openai', id: 'openai', models: ['gpt'] });
      const path = configWith('no-key.json', JSON.stringify(value, null, 2));
      const error = errorOf(cli(['doctor', '--config', path]).stderr);
      assert.equal(error.code, 'INVALID_CONFIG');
      assert.match(error.message, /\/providers\/1 must have required property 'apiKeyRef' \(a provider of kind openai\)/);
      assert.ok(!error.message.includes('must be equal to constant'), error.message);
      const line = readFileSync(path, 'utf8').split('\n').findIndex((text) => text.includes('"kind": "openai"'));
      assert.match(error.message, new RegExp(`line ${line}, column 5\\)\\.$`), 'the line of the entry (its opening brace)');
      value.providers[1] = { kind: 'opnai', id: 'openai', models: ['gpt'] };
      const unknown = errorOf(cli(['serve', '--config', configWith('bad-kind.json', JSON.stringify(value, null, 2))]).stderr);
      assert.match(unknown.message, /\/providers\/1\/kind "opnai" is not a provider kind; use one of mock, openai, /);
    });

    it('give the line and column of a JSON syntax error', () => {
      const path = configWith('trailing-comma.json', '{\n  "version": 1,\n  "providers": [],\n}\n');
      const error = errorOf(cli(['serve', '--config', path]).stderr);
      assert.equal(error.code, 'INVALID_CONFIG');
      assert.match(error.message, /is not valid JSON: line 4, column 1: a property name in double quotes was expected \(a trailing comma\?\)\.$/);
    });
  });

  describe('config edits and SIGHUP', () => {
    it('init says what to run next: the --config it needs and the key variable', () => {
      const path = join(tempDir('ad-init-next-'), 'config.json');
      const piped = json(cli(['init', '--config', path, '--provider', 'openai', '--model', 'gpt-test']).stdout);
      assert.equal(piped.next, `agenticdriver serve --config ${path}`);
      assert.deepEqual(piped.environment, ['OPENAI_API_KEY']);
      const schema = new URL(json(readFileSync(path, 'utf8')).$schema as string);
      assert.deepEqual(json(readFileSync(schema, 'utf8')), json(readFileSync(join(import.meta.dirname, '..', '..', 'protocol', 'host-config.schema.json'), 'utf8')), '$schema names the shipped schema');
      const other = join(tempDir('ad-init-next-'), 'config.json');
      const terminal = terminalCli(['init', '--config', other, '--provider', 'anthropic', '--model', 'claude-test']);
      assert.equal(terminal.status, 0, terminal.output);
      assert.match(terminal.output, /^ {2}export ANTHROPIC_API_KEY=\.\.\. /m);
      assert.match(terminal.output, new RegExp(`^ {2}agenticdriver serve --config ${other.replaceAll('.', '\\.')}$`, 'm'));
    });

    it('providers add and remove edit the config atomically, keep its mode, print no secret, and a SIGHUP applies them', async () => {
      chmodSync(config, 0o640);
      writeFileSync(join(dir, 'vendor.key'), 'sk-planted-provider-key-77\n', { mode: 0o600 });
      const added = cli(['providers', 'add', 'openai-compatible', '--config', config, '--id', 'local-llm', '--model', 'qwen', '--base-url', 'http://127.0.0.1:9/v1', '--api-key-file', 'vendor.key', '--grant', 'local']);
      assert.equal(added.status, 0, added.stderr);
      assert.deepEqual(json(added.stdout).grantedTo, ['local']);
      assert.equal(statSync(config).mode & 0o777, 0o640, 'the file keeps its mode');
      const entry = original().providers.find((provider: { id: string }) => provider.id === 'local-llm');
      assert.deepEqual(entry, { kind: 'openai-compatible', id: 'local-llm', models: ['qwen'], apiKeyRef: { file: 'vendor.key' }, baseUrl: 'http://127.0.0.1:9/v1' });
      const listed = cli(['providers', 'list', '--config', config]);
      assert.deepEqual(json(listed.stdout).providers.map((provider: { id: string; grantedTo: string[] }) => [provider.id, provider.grantedTo]), [['mock', ['local', 'operator']], ['local-llm', ['local']]]);
      for (const output of [added.stdout, added.stderr, listed.stdout, terminalCli(['providers', 'list', '--config', config]).output]) assert.ok(!output.includes('sk-planted'), output);

      const verdict = await reload();
      assert.equal(verdict.msg, 'config reloaded');
      assert.deepEqual(verdict.changed, ['tokens', 'providers'], 'the grant changed token local too');
      assert.deepEqual(json(cli(['status', ...client()]).stdout).providers.map((provider: { id: string }) => provider.id), ['mock', 'local-llm']);

      const removed = cli(['providers', 'remove', 'local-llm', '--config', config]);
      assert.equal(removed.status, 0, removed.stderr);
      assert.deepEqual(json(removed.stdout).revokedFrom, ['local']);
      assert.equal((await reload()).msg, 'config reloaded');
      assert.deepEqual(json(cli(['status', ...client()]).stdout).providers.map((provider: { id: string }) => provider.id), ['mock']);
    });

    it('refuses an edit that would leave the config invalid, and writes nothing', () => {
      const before = readFileSync(config, 'utf8');
      const last = cli(['providers', 'remove', 'mock', '--config', config]);
      assert.equal(last.status, 1);
      assert.match(errorOf(last.stderr).message, /^Nothing was written: the change would leave the config invalid\. .*\/providers must NOT have fewer than 1 items/);
      assert.equal(errorOf(cli(['providers', 'add', 'mock', '--config', config]).stderr).message, 'A provider with id mock is already configured; pick another with --id.');
      assert.equal(errorOf(cli(['providers', 'add', 'openai-compatible', '--config', config, '--model', 'x']).stderr).message, '--base-url is required for openai-compatible.');
      assert.equal(errorOf(cli(['tokens', 'grant', 'local', '--config', config, '--provider', 'nope']).stderr).code, 'INVALID_ARGUMENT');
      assert.equal(readFileSync(config, 'utf8'), before, 'the file is byte for byte the same');
    });

    it('tokens add writes a private token file and prints only its path; the host accepts the token after SIGHUP', async () => {
      const added = cli(['tokens', 'add', 'app', '--config', config, '--provider', 'mock', '--sessions', 'read']);
      assert.equal(added.status, 0, added.stderr);
      const tokenFile = json(added.stdout).tokenFile as string;
      const token = readFileSync(tokenFile, 'utf8').trim();
      assert.ok(token.length >= 32);
      assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
      for (const output of [added.stdout, added.stderr, cli(['tokens', 'list', '--config', config]).stdout, terminalCli(['tokens', 'list', '--config', config]).output]) assert.ok(!output.includes(token));
      const unknown = cli(['sessions', 'list', ...client(), '--token-id', 'app']);
      assert.equal(errorOf(unknown.stderr).code, 'UNAUTHORIZED', 'not before the reload');
      assert.deepEqual((await reload()).changed, ['tokens']);
      assert.deepEqual(json(cli(['sessions', 'list', ...client(), '--token-id', 'app']).stdout).sessions, [], 'another subject sees none of local\'s sessions');

      const granted = cli(['tokens', 'grant', 'app', '--config', config, '--jobs', 'read', 'submit']);
      assert.deepEqual(json(granted.stdout).token.jobs, ['read', 'submit']);
      const revoked = cli(['tokens', 'revoke', 'app', '--config', config, '--sessions', 'read']);
      assert.deepEqual(json(revoked.stdout).token.sessions, []);
      await reload();
      assert.equal(errorOf(cli(['sessions', 'list', ...client(), '--token-id', 'app']).stderr).code, 'FORBIDDEN');
      assert.equal(cli(['tokens', 'remove', 'app', '--config', config]).status, 0);
      await reload();
      const after = await fetch(`${url}/v1/protocol`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(after.status, 401, 'a removed token is refused once the host reloaded');
    });

    it('a SIGHUP with a broken or restart-only config keeps the running one and logs why', async () => {
      const good = readFileSync(config, 'utf8');
      try {
        writeFileSync(config, good.replace('"version": 1,', '"version": 1,,'));
        const broken = await reload();
        assert.equal(broken.msg, 'config reload refused; the running config stays');
        assert.equal(broken.error.code, 'INVALID_CONFIG');
        assert.match(broken.error.message, /line 3, column 16: a property name/);
        const value = json(good);
        value.listen.host = 'localhost';
        writeFileSync(config, JSON.stringify(value));
        const moved = await reload();
        assert.equal(moved.error.code, 'UNSUPPORTED_CONFIGURATION');
        assert.match(moved.error.message, /changes listen, which take effect only at a restart/);
      } finally {
        writeFileSync(config, good);
      }
      assert.equal(cli(['status', ...client()]).status, 0, 'the host kept serving');
    });
  });
});
