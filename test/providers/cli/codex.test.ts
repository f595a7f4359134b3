import { codex } from '../../../src/providers/cli/codex.js';
import { startOpenAIResponsesServer } from '../../vendors/index.js';
import { binary, codexAccount, hostEnvironment } from './harness.js';
import { describeRealCli } from './suite.js';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';

describeRealCli({
  name: 'codex',
  model: 'gpt-5.5',
  textStreaming: false,
  startServer: startOpenAIResponsesServer,
  adapter: async ({ server, key, directory, proxy, outputLimitBytes }) =>
    codex({
      binary: binary('codex'),
      models: ['gpt-5.5'],
      accountDirectory: await codexAccount(await mkdtemp(join(directory, 'account-')), server.url),
      environment: async () => ({ LOOPBACK_OPENAI_KEY: key }),
      hostEnvironment: hostEnvironment(proxy),
      ...(outputLimitBytes === undefined ? {} : { outputLimitBytes }),
    }),
});
