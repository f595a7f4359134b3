/** Starts a real host on loopback for a test, with a temp state directory and env tokens. */
import { join } from 'node:path';
import { parseHostConfig } from '../../src/host/config.js';
import { startHost, type HostOptions, type RunningHost } from '../../src/host/index.js';
import { tempDir } from './temp.js';

export const TOKEN = 'test-token-0123456789abcdefghijklmnop';
export const RESTRICTED_TOKEN = 'restricted-token-0123456789abcdefghij';
export const OTHER_TOKEN = 'other-token-0123456789abcdefghijklmnopq';

export const echoTool = {
  name: 'echo',
  description: 'Returns its arguments.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false },
  execute: (input: Record<string, unknown>) => input,
};

/** A host tool that needs a person's approval; each time it runs, its input is pushed to `effects` and it returns `result` (or `result(input)`). */
export function guardedTool(effects: unknown[], result: unknown | ((input: Record<string, unknown>) => unknown) = { done: true }) {
  return {
    name: 'guarded',
    description: 'An effect that needs a person to agree.',
    inputSchema: { type: 'object' },
    requiresApproval: true,
    execute: (input: Record<string, unknown>) => {
      effects.push(input);
      return typeof result === 'function' ? (result as (input: Record<string, unknown>) => unknown)(input) : result;
    },
  };
}

export interface TestHost extends RunningHost {
  dir: string;
  headers(extra?: Record<string, string>): Record<string, string>;
  post(path: string, body: unknown, extra?: Record<string, string>): Promise<Response>;
}

export async function startTestHost(
  overrides: Record<string, unknown> = {},
  options: Omit<HostOptions, 'config'> = {},
): Promise<TestHost> {
  const dir = tempDir('agenticdriver-host-');
  const raw = {
    version: 1,
    listen: { host: '127.0.0.1', port: 0 },
    providers: [
      { kind: 'mock', id: 'mock', models: ['demo'] },
      { kind: 'mock', id: 'second', models: ['demo'] },
    ],
    tokens: [
      { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'], tools: ['echo', 'guarded'] },
      { id: 'restricted', subject: 'restricted-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: [] },
      { id: 'other', subject: 'test-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock', 'second'], tools: [] },
    ],
    state: { directory: join(dir, 'state') },
    ...overrides,
  };
  const config = parseHostConfig(raw, join(dir, 'config.json'));
  const env = { ...process.env, AD_TEST_TOKEN: TOKEN, AD_TEST_RESTRICTED: RESTRICTED_TOKEN, AD_TEST_OTHER: OTHER_TOKEN };
  const host = await startHost({ config, env, tools: [echoTool], ...options });
  const headers = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...extra });
  return {
    ...host,
    dir,
    headers,
    post: (path, body, extra) =>
      fetch(`${host.url}${path}`, { method: 'POST', headers: headers(extra), body: typeof body === 'string' ? body : JSON.stringify(body) }),
  };
}

export function script(...steps: unknown[][]): string {
  return JSON.stringify({ mockScript: { steps: steps.map((actions) => ({ actions })) } });
}

/** Parses an SSE body into its events (the host writes one-line data frames). */
export function parseSse(body: string): Record<string, unknown>[] {
  return body
    .split('\n\n')
    .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

/** Reads an SSE response incrementally, yielding each event as it arrives. */
export async function* sseEvents(response: Response): AsyncGenerator<Record<string, unknown>> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').find((line) => line.startsWith('data: '));
        if (data) yield JSON.parse(data.slice(6)) as Record<string, unknown>;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
