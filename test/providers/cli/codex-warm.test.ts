/** Codex with warm reuse (`codex app-server`): the shared real-CLI checks and the pool's promises. */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { codex } from '../../../src/providers/cli/codex.js';
import { startOpenAIResponsesServer } from '../../vendors/index.js';
import { binary, codexAccount, hostEnvironment } from './harness.js';
import { describeRealCli, describeWarmPool, type CliSpec } from './suite.js';

const spec: CliSpec = {
  name: 'codex (warm app-server)',
  model: 'gpt-5.5',
  textStreaming: true,
  startServer: startOpenAIResponsesServer,
  adapter: async ({ server, key, directory, proxy, outputLimitBytes, idleMs }) =>
    codex({
      binary: binary('codex'),
      models: ['gpt-5.5'],
      accountDirectory: await codexAccount(await mkdtemp(join(directory, 'account-')), server.url),
      environment: async () => ({ LOOPBACK_OPENAI_KEY: key }),
      hostEnvironment: hostEnvironment(proxy),
      warm: { processes: 1, idleMs: idleMs ?? 60_000 },
      ...(outputLimitBytes === undefined ? {} : { outputLimitBytes }),
    }),
};

describeRealCli(spec);
describeWarmPool(spec);
