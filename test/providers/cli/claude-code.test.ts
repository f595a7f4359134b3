import { claudeCode } from '../../../src/providers/cli/claude-code.js';
import { startAnthropicMessagesServer } from '../../vendors/index.js';
import { binary, claudeAccount, hostEnvironment } from './harness.js';
import { describeRealCli } from './suite.js';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';

describeRealCli({
  name: 'claude-code',
  model: 'claude-test',
  textStreaming: true,
  startServer: startAnthropicMessagesServer,
  adapter: async ({ server, key, directory, proxy, outputLimitBytes }) =>
    claudeCode({
      binary: binary('claude'),
      models: ['claude-test'],
      accountDirectory: await claudeAccount(await mkdtemp(join(directory, 'account-'))),
      environment: async () => ({ ANTHROPIC_BASE_URL: server.origin, ANTHROPIC_API_KEY: key }),
      hostEnvironment: hostEnvironment(proxy),
      ...(outputLimitBytes === undefined ? {} : { outputLimitBytes }),
    }),
});
