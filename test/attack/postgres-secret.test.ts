/**
 * The PostgreSQL URL is a secret (it carries the password): a host on PostgreSQL started by
 * the real CLI — serving, failing to authenticate, failing to connect — and `audit` never
 * print it, in any encoding, and nothing the host answers over HTTP contains it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { freshDatabase, postgresUrl, superuserQuery } from '../support/postgres.js';
import { encodedForms } from '../support/secrets.js';
import { tempDir } from '../support/temp.js';
import { cliCommand } from '../support/processes.js';

const root = join(import.meta.dirname, '..', '..');
const TOKEN = 'pg-secret-token-0123456789abcdefghijklm';
const PASSWORD = 'pg/pass+0123456789=abcdef~ghijklmnop';
const ROLE = `agenticdriver_secret_${process.pid}`;

describe('secret grep: the PostgreSQL URL', () => {
  const dir = tempDir('agenticdriver-pg-secret-');
  const captures: { what: string; text: string }[] = [];
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let goodUrl = '';

  before(async () => {
    database = await freshDatabase();
    await superuserQuery(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`);
    await superuserQuery(`ALTER DATABASE ${database.name} OWNER TO ${ROLE}`);
    const url = new URL(database.url);
    url.username = ROLE;
    url.password = PASSWORD;
    goodUrl = url.toString();
    mkdirSync(dir, { recursive: true });
  });
  after(async () => {
    await database.drop();
    await superuserQuery(`DROP ROLE IF EXISTS ${ROLE}`);
    rmSync(dir, { recursive: true, force: true });
  });

  function config(name: string): string {
    const path = join(dir, `${name}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        listen: { host: '127.0.0.1', port: 0 },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [{ id: 'main', subject: 'ops', tokenRef: { env: 'AD_PG_SECRET_TOKEN' }, providers: ['mock'] }],
        state: { engine: 'postgres', urlRef: { env: 'AD_PG_SECRET_URL' } },
      }),
      { mode: 0o600 },
    );
    return path;
  }
  async function cli(what: string, args: string[], url: string, untilListening = false) {
    const env = { ...process.env, HOME: dir, AGENTICDRIVER_CONFIG: '', AD_PG_SECRET_TOKEN: TOKEN, AD_PG_SECRET_URL: url };
    const child = spawn(process.execPath, cliCommand(args), { env, cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    if (untilListening) {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        void closed.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
      });
      stdout += line;
      const hostUrl = (JSON.parse(line) as { url: string }).url;
      for (const body of [{ provider: 'mock', model: 'demo', input: 'hello', idempotencyKey: 'k1' }, { provider: 'mock', model: 'demo', input: 'other', idempotencyKey: 'k1' }]) {
        const response = await fetch(`${hostUrl}/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        captures.push({ what: `${what} HTTP`, text: `${response.status} ${[...response.headers].join('\n')}\n${await response.text()}` });
      }
      child.kill('SIGTERM');
    } else {
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    }
    const status = await closed;
    captures.push({ what: `${what} stdout`, text: stdout }, { what: `${what} stderr`, text: stderr });
    return { status, stderr };
  }

  it('never appears in output, errors or answers', async () => {
    const served = await cli('serve', ['serve', '--config', config('good'), '--json'], goodUrl, true);
    assert.equal(served.status, 0, served.stderr);
    const audit = await cli('audit', ['audit', '--config', config('good'), '--json'], goodUrl);
    assert.equal(audit.status, 0, audit.stderr);
    const wrong = new URL(goodUrl);
    wrong.password = `${PASSWORD}-wrong`;
    const refused = await cli('serve with a wrong password', ['serve', '--config', config('wrong'), '--json'], wrong.toString());
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /OPERATION_STORE_ERROR/);
    const down = new URL(goodUrl);
    down.port = String(Number(new URL(postgresUrl()).port) + 1);
    const unreachable = await cli('serve with the server down', ['serve', '--config', config('down'), '--json'], down.toString());
    assert.equal(unreachable.status, 1);
    const forms = [...encodedForms(PASSWORD), ...encodedForms(`${PASSWORD}-wrong`)];
    const leaks = captures.flatMap((capture) => forms.filter((form) => capture.text.includes(form)).map((form) => `${capture.what}: ${form}`));
    assert.deepEqual(leaks, []);
  });
});
