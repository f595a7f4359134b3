/** Gemini CLI with warm reuse (`gemini --acp`): the shared real-CLI checks and the pool's promises. */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { geminiCli } from '../../../src/providers/cli/gemini-cli.js';
import { startGeminiServer } from '../../vendors/index.js';
import { binary, geminiAccount, hostEnvironment } from './harness.js';
import { describeRealCli, describeWarmPool, type CliSpec } from './suite.js';

const spec: CliSpec = {
  name: 'gemini-cli (warm acp)',
  model: 'gemini-2.5-flash',
  textStreaming: true,
  startServer: startGeminiServer,
  adapter: async ({ server, key, directory, proxy, outputLimitBytes, idleMs }) =>
    geminiCli({
      binary: binary('gemini'),
      models: ['gemini-2.5-flash'],
      accountDirectory: await geminiAccount(await mkdtemp(join(directory, 'account-'))),
      environment: async () => ({ GOOGLE_GEMINI_BASE_URL: server.origin, GEMINI_API_KEY: key }),
      hostEnvironment: hostEnvironment(proxy),
      warm: { processes: 1, idleMs: idleMs ?? 60_000 },
      ...(outputLimitBytes === undefined ? {} : { outputLimitBytes }),
    }),
};

describeRealCli(spec);
describeWarmPool(spec);
