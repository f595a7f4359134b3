/**
 * A run that asks a person before it sends an email through an application tool.
 * Walk-through: docs/approvals-and-application-tools.md.
 *
 *   npx tsx examples/approvals/send-email.ts             # answer the question on the terminal
 *   echo y | npx tsx examples/approvals/send-email.ts    # or pipe the answer in
 *
 * Without AGENTICDRIVER_URL it starts a throwaway local host with the mock provider, whose
 * script plays the model asking to send one email. Applications import from
 * 'agenticdriver/client'; this file imports the source.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { AgenticClient, type RunRequest, type ToolContext } from '../../src/client/index.js';
import { parseHostConfig, startHost } from '../../src/host/index.js';

/** A host that offers interactive approvals and application tools, and a token allowed to use both for send_email. */
async function localHost(): Promise<{ url: string; token: string; close(): Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), 'agenticdriver-example-'));
  const token = randomBytes(24).toString('hex');
  const config = parseHostConfig(
    {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      approvals: { interactive: true },
      applicationTools: { enabled: true },
      tokens: [
        {
          id: 'mailer',
          subject: 'mail-app',
          tokenRef: { env: 'EXAMPLE_TOKEN' },
          providers: ['mock'],
          approveTools: ['send_email'],
          applicationTools: [{ name: 'send_email' }],
        },
      ],
      state: { directory: join(directory, 'state') },
    },
    join(directory, 'config.json'),
  );
  const host = await startHost({ config, env: { EXAMPLE_TOKEN: token } });
  return {
    url: host.url,
    token,
    close: async () => {
      await host.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The application's own function: the host never sees this code, only its JSON result. */
async function sendEmail(args: Record<string, unknown>, context: ToolContext): Promise<{ messageId: string }> {
  console.log('connecting to the mail server...');
  await new Promise((resolve) => setTimeout(resolve, 50)); // stands in for real work
  await context.progress(); // real progress, reported after the work; it resets the run's idle timer
  const messageId = `<${randomUUID()}@example.com>`;
  console.log(`sent to ${String(args.to)} as ${messageId}`);
  return { messageId };
}

/** One line from the terminal (or the piped input); an empty answer when stdin ends. */
function ask(question: string): Promise<string> {
  const lines = createInterface({ input: process.stdin, output: process.stdout, terminal: false });
  process.stdout.write(question);
  return new Promise<string>((resolve) => {
    lines.once('line', resolve);
    lines.once('close', () => resolve(''));
  }).finally(() => {
    lines.close();
    if (!process.stdin.isTTY) process.stdout.write('\n'); // a piped answer is not echoed
  });
}

const email = { to: 'ada@example.com', subject: 'Quarterly numbers', body: 'Hi Ada, the numbers are attached. Best, Grace' };

const request: RunRequest = {
  provider: 'mock',
  model: 'demo',
  // With a real model this is your instruction; the mock script plays a model that calls send_email once.
  input: JSON.stringify({
    mockScript: { steps: [{ actions: [{ toolCall: { name: 'send_email', arguments: email } }] }, { actions: [{ echoToolResults: true }] }] },
  }),
  tools: ['send_email'],
  applicationTools: [
    {
      name: 'send_email',
      description: 'Send one email from the user\'s account.',
      inputSchema: {
        type: 'object',
        properties: { to: { type: 'string' }, subject: { type: 'string' }, body: { type: 'string' } },
        required: ['to', 'subject', 'body'],
        additionalProperties: false,
      },
      outputSchema: { type: 'object', properties: { messageId: { type: 'string' } }, required: ['messageId'] },
      requiresApproval: true,
    },
  ],
  // A person may take minutes to decide: 'pause' stops the idle timer while the question is open.
  approvals: { mode: 'interactive', idlePolicy: 'pause' },
};

const target = process.env.AGENTICDRIVER_URL
  ? { url: process.env.AGENTICDRIVER_URL, token: process.env.AGENTICDRIVER_TOKEN ?? '', close: async () => undefined }
  : await localHost();

try {
  const client = new AgenticClient({ url: target.url, token: target.token });
  for await (const event of client.streamWithTools(request, { send_email: sendEmail })) {
    switch (event.type) {
      case 'approval.requested': {
        const { call } = event.approval;
        console.log(`The model wants to call ${call.name}:`);
        for (const [field, value] of Object.entries(call.arguments)) console.log(`  ${field}: ${String(value)}`);
        const answer = await ask('Send this email? [y/N] ');
        const pending = client.approval(event);
        const receipt = /^y(es)?$/i.test(answer.trim()) ? await pending.approve() : await pending.deny();
        console.log(`decision recorded: ${receipt.outcome}`);
        break;
      }
      case 'tool.execution.requested':
        console.log(`running ${event.execution.call.name} in this application`);
        break;
      case 'run.completed':
        console.log(`run completed: ${event.result.text}`);
        break;
      case 'run.failed':
      case 'run.cancelled':
        console.log(`${event.type}: ${event.error.code}${event.error.outcome ? ` (outcome ${event.error.outcome})` : ''}`);
        break;
    }
  }
} finally {
  await target.close();
}
