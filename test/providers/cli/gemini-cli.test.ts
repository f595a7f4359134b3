import { geminiCli } from '../../../src/providers/cli/gemini-cli.js';
import { startGeminiServer } from '../../vendors/index.js';
import { binary, geminiAccount, hostEnvironment } from './harness.js';
import { describeRealCli } from './suite.js';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';

describeRealCli({
  name: 'gemini-cli',
  model: 'gemini-2.5-flash',
  textStreaming: true,
  startServer: startGeminiServer,
  adapter: async ({ server, key, directory, proxy, outputLimitBytes }) =>
    geminiCli({
      binary: binary('gemini'),
      models: ['gemini-2.5-flash'],
      accountDirectory: await geminiAccount(await mkdtemp(join(directory, 'account-'))),
      environment: async () => ({ GOOGLE_GEMINI_BASE_URL: server.origin, GEMINI_API_KEY: key }),
      hostEnvironment: hostEnvironment(proxy),
      ...(outputLimitBytes === undefined ? {} : { outputLimitBytes }),
    }),
});
