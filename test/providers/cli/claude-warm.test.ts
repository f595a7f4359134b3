/** Claude Code with warm starts (a started `--input-format stream-json` spare per run): the shared real-CLI checks and the spare's promises. */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { claudeCode } from '../../../src/providers/cli/claude-code.js';
import { startAnthropicMessagesServer } from '../../vendors/index.js';
import { binary, claudeAccount, hostEnvironment } from './harness.js';
import { describeRealCli, describeSpareProcess, type CliSpec } from './suite.js';

const spec: CliSpec = {
  name: 'claude-code (warm spare)',
  model: 'claude-test',
  textStreaming: true,
  keepsSpare: true,
  startServer: startAnthropicMessagesServer,
  adapter: async ({ server, key, directory, proxy, outputLimitBytes, idleMs, idleTimer }) =>
    claudeCode({
      binary: binary('claude'),
      models: ['claude-test'],
      accountDirectory: await claudeAccount(await mkdtemp(join(directory, 'account-'))),
      environment: async () => ({ ANTHROPIC_BASE_URL: server.origin, ANTHROPIC_API_KEY: key }),
      hostEnvironment: hostEnvironment(proxy),
      warm: { processes: 1, idleMs: idleMs ?? 60_000, ...(idleTimer ? { idleTimer } : {}) },
      ...(outputLimitBytes === undefined ? {} : { outputLimitBytes }),
    }),
};

describeRealCli(spec);
describeSpareProcess(spec);
