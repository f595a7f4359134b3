/** docs/approvals-and-application-tools.md promises that examples/approvals/send-email.ts runs as is; this keeps the promise. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { it } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;

function runExample(answer: string): Promise<string> {
  const env = { ...process.env };
  delete env.AGENTICDRIVER_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/approvals/send-email.ts'], { cwd: root, env, timeout: 60_000 });
  child.stdin.end(answer);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}`))));
  });
}

it('sends the email only after the person says yes', async () => {
  const stdout = await runExample('y\n');
  assert.match(stdout, /The model wants to call send_email:\n {2}to: ada@example\.com/);
  assert.match(stdout, /decision recorded: approved/);
  const sent = /sent to ada@example\.com as (<[^>]+>)/.exec(stdout);
  assert.ok(sent, stdout);
  assert.ok(stdout.includes(`run completed: [{"messageId":"${sent[1]}"}]`), stdout);
});

it('sends nothing when the person says no, or does not answer', async () => {
  for (const answer of ['n\n', '']) {
    const stdout = await runExample(answer);
    assert.match(stdout, /decision recorded: denied/);
    assert.match(stdout, /run\.failed: APPROVAL_DENIED/);
    assert.doesNotMatch(stdout, /sent to|running send_email/);
  }
});
