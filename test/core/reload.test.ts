/**
 * Config reload without a restart (src/host/reload.ts): all or nothing, unchanged adapters
 * kept, a replaced adapter closed only once its last run has ended, limits applied to what is
 * admitted next, and the fields that need a restart refused.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseHostConfig, type HostConfig } from '../../src/host/config.js';
import type { ProviderAdapter, ProviderPart } from '../../src/providers/spec/v1.js';
import { AgenticDriver } from '../../src/runtime/driver.js';
import { OTHER_TOKEN, script, startTestHost, TOKEN, type TestHost } from '../support/host.js';

/** An adapter whose one step waits for `release`, and that records being closed. */
function gatedAdapter(id: string) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const adapter: ProviderAdapter & { closed: boolean } = {
    closed: false,
    info: { id, name: id, vendor: 'test', authMode: 'none', capabilities: { tools: false, textStreaming: true }, models: ['m'] },
    async *stream(): AsyncIterable<ProviderPart> {
      await gate;
      yield { type: 'text-delta', text: 'done' };
      yield { type: 'finish', finishReason: 'stop' };
    },
    async close() {
      adapter.closed = true;
    },
  };
  return { adapter, release: open };
}

describe('the driver swapping its providers', () => {
  it('closes a replaced adapter only after its last run ends, and at once when idle', async () => {
    const busy = gatedAdapter('busy');
    const idle = gatedAdapter('idle');
    const driver = new AgenticDriver({ providers: [busy.adapter, idle.adapter] });
    const events = driver.stream({ provider: 'busy', model: 'm', input: 'hi' });
    const first = await events.next();
    assert.equal(first.value?.type, 'run.started');
    const next = gatedAdapter('next');
    driver.replaceProviders([next.adapter]);
    await Promise.resolve();
    assert.equal(idle.adapter.closed, true, 'an idle replaced adapter is closed at once');
    assert.equal(busy.adapter.closed, false, 'a run still streams from it');
    assert.equal(driver.provider('busy'), undefined, 'new runs no longer find it');
    busy.release();
    const rest = [];
    for await (const event of { [Symbol.asyncIterator]: () => events }) rest.push(event.type);
    assert.equal(rest.at(-1), 'run.completed');
    assert.equal(busy.adapter.closed, true, 'closed once its run ended');
    assert.equal(next.adapter.closed, false);
  });
});

describe('a running host reloading its config', () => {
  let host: TestHost;
  let config: HostConfig;
  const base = {
    version: 1,
    listen: { host: '127.0.0.1', port: 0 },
    providers: [
      { kind: 'mock', id: 'mock', models: ['demo'] },
      { kind: 'mock', id: 'second', models: ['demo'] },
    ],
    tokens: [
      { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock'] },
      { id: 'other', subject: 'test-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock', 'second'] },
    ],
  };
  const next = (change: (raw: any) => void): HostConfig => {
    const raw = structuredClone({ ...base, state: { directory: join(host.dir, 'state') } }) as any;
    change(raw);
    return parseHostConfig(raw, join(host.dir, 'config.json'));
  };
  const providers = async (token = TOKEN) => {
    const response = await fetch(`${host.url}/v1/providers`, { headers: { authorization: `Bearer ${token}` } });
    return ((await response.json()) as { providers: { id: string; models: string[] }[] }).providers.map((provider) => `${provider.id}:${provider.models.join(',')}`);
  };

  before(async () => {
    host = await startTestHost(base);
    config = next(() => undefined);
  });
  after(() => host.close());

  it('keeps an unchanged adapter and builds a new one for a changed entry', async () => {
    const mock = host.driver.provider('mock');
    const second = host.driver.provider('second');
    const result = await host.reload(next((raw) => (raw.providers[1].models = ['demo', 'wide'])));
    assert.deepEqual(result.changed, ['providers']);
    assert.equal(host.driver.provider('mock'), mock, 'the same adapter object');
    assert.notEqual(host.driver.provider('second'), second);
    assert.deepEqual(await providers(OTHER_TOKEN), ['mock:demo', 'second:demo,wide']);
  });

  it('is all or nothing: a token that cannot be read refuses the whole reload', async () => {
    const before = await providers();
    await assert.rejects(
      host.reload(
        next((raw) => {
          raw.tokens[0].providers = ['mock', 'second'];
          raw.tokens.push({ id: 'unreadable', subject: 'x', tokenRef: { env: 'AD_NOT_SET_ANYWHERE' }, providers: [] });
        }),
      ),
      { code: 'AUTH_REQUIRED' },
    );
    assert.deepEqual(await providers(), before, 'the grant change was not applied either');
  });

  it('applies new limits to runs admitted from now on', async () => {
    await host.reload(next((raw) => (raw.limits = { maxConcurrentRunsPerSubject: 1 })));
    const hanging = await host.post('/v1/runs', { provider: 'mock', model: 'demo', input: script([{ hang: true }]) }, { accept: 'text/event-stream' });
    assert.equal(hanging.status, 200);
    const second = await host.post('/v1/runs', { provider: 'mock', model: 'demo', input: 'hi' });
    assert.equal(second.status, 429);
    await hanging.body?.cancel();
    await host.reload(config);
  });

  it('refuses what only a restart applies, naming it, and changes nothing', async () => {
    const refusals: [string, (raw: any) => void, RegExp][] = [
      ['listen', (raw) => (raw.listen.host = 'localhost'), /changes listen, which take effect only at a restart/],
      ['sessions', (raw) => (raw.sessions = { retentionMs: 60_000 }), /changes sessions/],
      ['body limit', (raw) => (raw.limits = { maxBodyBytes: 2048 }), /limits\.maxBodyBytes takes effect only at a restart/],
      ['first operator', (raw) => (raw.tokens[0].operator = true), /first token with the operator grant/],
    ];
    for (const [what, change, message] of refusals) {
      await assert.rejects(host.reload(next((raw) => {
        raw.providers.push({ kind: 'mock', id: 'third', models: ['demo'] });
        raw.tokens[1].providers.push('third');
        change(raw);
      })), (error: Error & { code: string }) => error.code === 'UNSUPPORTED_CONFIGURATION' && message.test(error.message), what);
    }
    assert.ok(!(await providers(OTHER_TOKEN)).some((entry) => entry.startsWith('third')), 'nothing of a refused reload was applied');
  });

  it('re-reads every token secret, so a rotated token file applies on reload', async () => {
    const file = join(host.dir, 'rotating.token');
    writeFileSync(file, `${'a'.repeat(40)}\n`, { mode: 0o600 });
    const withFile = next((raw) => raw.tokens.push({ id: 'file', subject: 'f', tokenRef: { file }, providers: ['mock'] }));
    await host.reload(withFile);
    assert.deepEqual(await providers('a'.repeat(40)), ['mock:demo']);
    writeFileSync(file, `${'b'.repeat(40)}\n`, { mode: 0o600 });
    const result = await host.reload(withFile);
    assert.deepEqual(result.changed, [], 'no entry changed');
    assert.deepEqual(await providers('b'.repeat(40)), ['mock:demo']);
    assert.equal((await fetch(`${host.url}/v1/providers`, { headers: { authorization: `Bearer ${'a'.repeat(40)}` } })).status, 401);
  });
});
