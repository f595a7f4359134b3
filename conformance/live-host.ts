/**
 * Starts the real agenticdriver host (src/host) for the live scenarios: mock provider,
 * host tools `echo` and `guarded` (needs approval), interactive approvals and application
 * tools enabled, background runs that wait for people (`jobs.interactive`), a retrieval corpus `default` the main token may search, index and delete,
 * a main and a restricted token. Loaded dynamically so the harness still
 * runs the peer while the host is not built.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface LiveHost {
  url: string;
  runs(): Record<string, number>;
  close(): Promise<void>;
}

export interface LiveHostTokens {
  main: string;
  restricted: string;
}

interface HostModule {
  startHost(options: Record<string, unknown>): Promise<{ url: string; close(): Promise<void>; metrics: { runs: Record<string, number> } }>;
}

interface ConfigModule {
  parseHostConfig(raw: unknown, path: string): unknown;
}

const root = new URL('..', import.meta.url).pathname;
export const HOST_ENTRY = join(root, 'src', 'host', 'index.ts');

export const ECHO_TOOL = { name: 'echo', description: 'Echo', inputSchema: { type: 'object' }, execute: (input: unknown) => input };
export const GUARDED_TOOL = {
  name: 'guarded',
  description: 'Runs only after a person approved the exact call',
  inputSchema: { type: 'object' },
  requiresApproval: true,
  execute: (input: unknown) => ({ approved: true, arguments: input }),
};

export function newTokens(): LiveHostTokens {
  return { main: randomBytes(24).toString('hex'), restricted: randomBytes(24).toString('hex') };
}

/** Starts the host, or returns the reason it could not. */
export async function startLiveHost(
  tokens: LiveHostTokens,
  tls: { certFile: string; keyFile: string } | undefined,
  allowedOrigins: string[] = [],
): Promise<LiveHost | string> {
  if (!existsSync(HOST_ENTRY)) return `${HOST_ENTRY} does not exist yet`;
  const directory = mkdtempSync(join(tmpdir(), 'agenticdriver-live-'));
  const secret = (name: string, value: string) => {
    const path = join(directory, name);
    writeFileSync(path, value, { mode: 0o600 });
    return { file: path };
  };
  try {
    const { startHost } = (await import(pathToFileURL(HOST_ENTRY).href)) as HostModule;
    const { parseHostConfig } = (await import(pathToFileURL(join(root, 'src', 'host', 'config.ts')).href)) as ConfigModule;
    const config = parseHostConfig(
      {
        version: 1,
        listen: { host: '127.0.0.1', port: 0, ...(tls ? { tls: { certFile: tls.certFile, keyRef: { file: tls.keyFile } } } : {}) },
        providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
        tokens: [
          {
            id: 'main',
            subject: 'test-user',
            tokenRef: secret('main-token', tokens.main),
            providers: ['mock'],
            tools: ['echo', 'guarded'],
            approveTools: ['guarded', 'application_lookup'],
            applicationTools: [{ name: 'application_lookup', requiresApproval: false }],
            sessions: ['create', 'read', 'continue', 'delete'],
            jobs: ['submit', 'read', 'cancel'],
            retrieval: { search: ['default'], index: ['default'], delete: ['default'] },
          },
          { id: 'restricted', subject: 'restricted-user', tokenRef: secret('restricted-token', tokens.restricted), providers: [] },
        ],
        allowedOrigins,
        approvals: { interactive: true },
        applicationTools: { enabled: true, requireApproval: false },
        sessions: { retentionMs: 600_000 },
        jobs: { retentionMs: 600_000, pollIntervalMs: 20, interactive: true },
        retrieval: { corpora: [{ id: 'default' }] },
        state: { directory: join(directory, 'state') },
      },
      join(directory, 'config.json'),
    );
    const host = await startHost({ config, tools: [ECHO_TOOL, GUARDED_TOOL] });
    return {
      url: host.url.replace(/\/$/, ''),
      runs: () => ({ cancelled: 0, completed: 0, failed: 0, ...host.metrics.runs }),
      close: async () => {
        await host.close();
        rmSync(directory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    return `the live host failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}`;
  }
}
