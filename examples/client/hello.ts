/**
 * A first AgenticClient program: discovery, a streamed run, a buffered run, and a run
 * that stops early (which cancels it on the host).
 *
 *   AGENTICDRIVER_URL=http://127.0.0.1:7433 AGENTICDRIVER_TOKEN=... npx tsx examples/client/hello.ts
 *
 * Without AGENTICDRIVER_URL it starts a throwaway local host with the mock provider, so it
 * runs as is. Applications import from 'agenticdriver/client'; this file imports the source.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgenticClient, DriverError } from '../../src/client/index.js';
import { parseHostConfig, startHost } from '../../src/host/index.js';

async function localHost(): Promise<{ url: string; token: string; close(): Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), 'agenticdriver-example-'));
  const token = randomBytes(24).toString('hex');
  const config = parseHostConfig(
    {
      version: 1,
      listen: { host: '127.0.0.1', port: 0 },
      providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
      tokens: [{ id: 'example', subject: 'example-user', tokenRef: { env: 'EXAMPLE_TOKEN' }, providers: ['mock'] }],
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

const target = process.env.AGENTICDRIVER_URL
  ? { url: process.env.AGENTICDRIVER_URL, token: process.env.AGENTICDRIVER_TOKEN ?? '', close: async () => undefined }
  : await localHost();

try {
  const client = new AgenticClient({ url: target.url, token: target.token });

  const info = await client.protocol();
  console.log(`host speaks ${info.protocol} ${info.version}`);
  const providers = await client.providers();
  console.log(`providers: ${providers.map((provider) => provider.id).join(', ')}`);

  // Streamed: validated events, ending with exactly one terminal event.
  process.stdout.write('stream: ');
  for await (const event of client.stream({ provider: 'mock', model: 'demo', input: 'Hello, streaming world' })) {
    if (event.type === 'text.delta') process.stdout.write(event.text);
    if (event.type === 'run.completed') process.stdout.write(`  [${event.result.finishReason}, ${event.result.steps} step]\n`);
  }

  // Buffered: the final result, or a DriverError with the run's code.
  const result = await client.run({ provider: 'mock', model: 'demo', input: 'Hello, buffered world' });
  console.log(`run: ${result.text}`);

  // Leaving the loop closes the connection, and the host cancels the run.
  const slow = JSON.stringify({ mockScript: { steps: [{ actions: [{ text: 'first words' }, { hang: true }] }] } });
  for await (const event of client.stream({ provider: 'mock', model: 'demo', input: slow })) {
    if (event.type === 'text.delta') {
      console.log(`stopped after: ${event.text}`);
      break;
    }
  }

  try {
    await client.run({ provider: 'nope', model: 'demo', input: 'Hello' });
  } catch (error) {
    if (!(error instanceof DriverError)) throw error;
    console.log(`typed error: ${error.code} (retryable: ${error.retryable})`);
  }
} finally {
  await target.close();
}
