/**
 * Shared set-up of the real-CLI tests: the pinned binaries from test/cli-tools, account
 * directories that point each CLI at a loopback vendor server, a refusing proxy that
 * records any traffic that tries to leave, and helpers to drive an adapter to completion.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { DriverError } from '../../../src/protocol/errors.js';
import type { ProviderAdapter, ProviderPart, ProviderRequest } from '../../../src/providers/contract/v1.js';
import { tempDir } from '../../support/temp.js';

export const CLI_BIN = resolve(import.meta.dirname, '../../cli-tools/node_modules/.bin');
export const binary = (name: 'codex' | 'claude' | 'gemini') => join(CLI_BIN, name);
export const API_KEY = 'loopback-test-key';

/** A TCP listener standing in for HTTPS_PROXY: it records every connection and refuses it. */
export interface RefusingProxy {
  url: string;
  attempts: string[];
  close(): Promise<void>;
}

export async function startRefusingProxy(): Promise<RefusingProxy> {
  const attempts: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('data', (chunk) => {
      attempts.push(chunk.toString('latin1').split('\r\n')[0] ?? '');
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    attempts,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** The only host variables the tests hand to the adapter's allowlist. */
export function hostEnvironment(proxy: RefusingProxy): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    HTTPS_PROXY: proxy.url,
    https_proxy: proxy.url,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    // Must never reach a CLI: the allowlist drops it.
    OPENAI_API_KEY: 'host-secret-must-not-leak',
    ANTHROPIC_API_KEY: 'host-secret-must-not-leak',
    GEMINI_API_KEY: 'host-secret-must-not-leak',
  };
}

export async function scratchDirectory(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = tempDir(`ad-cli-test-${prefix}-`);
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** A Codex home whose config uses a custom Responses provider at `baseUrl` (no retries). */
export async function codexAccount(directory: string, baseUrl: string): Promise<string> {
  const home = join(directory, 'codex-home');
  await mkdir(home, { recursive: true });
  await writeFile(
    join(home, 'config.toml'),
    [
      'model_provider = "loopback"',
      '[model_providers.loopback]',
      'name = "loopback"',
      `base_url = "${baseUrl.replace(/\/$/, '')}"`,
      'env_key = "LOOPBACK_OPENAI_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  return home;
}

/** A Claude config directory; the base URL and key come through the provider's `environment`. */
export async function claudeAccount(directory: string): Promise<string> {
  const home = join(directory, 'claude-config');
  await mkdir(home, { recursive: true });
  return home;
}

/** A Gemini CLI home with API-key auth selected. */
export async function geminiAccount(directory: string): Promise<string> {
  const home = join(directory, 'gemini-home');
  await mkdir(join(home, '.gemini'), { recursive: true });
  await writeFile(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
  return home;
}

export function request(input: string, model: string, overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return { model, messages: [{ role: 'user', content: input }], tools: [], maxOutputTokens: 1024, ...overrides };
}

export interface Drained {
  parts: ProviderPart[];
  text: string;
  error?: DriverError;
}

/** Runs one step to the end, collecting parts and the typed error, if any. */
export async function drain(adapter: ProviderAdapter, req: ProviderRequest, signal = new AbortController().signal): Promise<Drained> {
  const parts: ProviderPart[] = [];
  try {
    for await (const part of adapter.stream(req, signal)) parts.push(part);
  } catch (error) {
    if (!(error instanceof DriverError)) throw error;
    return { parts, text: joinText(parts), error };
  }
  return { parts, text: joinText(parts) };
}

const joinText = (parts: ProviderPart[]) => parts.map((part) => (part.type === 'text-delta' ? part.text : '')).join('');

/** Live processes (zombies awaiting their reaper excluded) whose process group is `pgid`. */
export function groupMembers(pgid: number): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,pgid=,stat='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((row) => row.trim().split(/\s+/))
    .filter(([, group, stat]) => Number(group) === pgid && !stat?.startsWith('Z'))
    .map(([pid]) => Number(pid));
}

/** Process groups led by direct children of this test process (the CLI runs in flight). */
export function childGroups(): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,pgid='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((row) => row.trim().split(/\s+/).map(Number))
    .filter(([pid, ppid, pgid]) => ppid === process.pid && pid === pgid)
    .map(([pid]) => pid!);
}
