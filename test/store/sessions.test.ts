/**
 * Conversation sessions over real HTTP on every store engine: turns only at the current
 * revision, the history replayed to the provider (a loopback vendor records what it got), busy
 * and interrupted turns refused before model work, deletion cancelling an active turn, grants,
 * and sessions that survive a restart and continue alternately through two hosts on one store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StateStore } from '../../src/store/store.js';
import { OTHER_TOKEN, script, sseEvents, startTestHost, type TestHost } from '../support/host.js';
import { ENGINES, openTestStore, sharedState } from '../support/stores.js';
import { startChatCompletionsServer, type VendorServer } from '../vendors/index.js';

const VENDOR_KEY = 'vendor-key-for-session-tests';

for (const engine of ENGINES) {
  describe(`conversation sessions (${engine})`, () => {
    const hosts: TestHost[] = [];
    let vendor: VendorServer;
    before(async () => {
      vendor = await startChatCompletionsServer({ apiKey: VENDOR_KEY, models: ['m'] });
    });
    after(async () => {
      for (const host of hosts) await host.close().catch(() => undefined);
      await vendor.close();
    });
    async function host(store: StateStore, overrides: Record<string, unknown> = {}): Promise<TestHost> {
      const started = await startTestHost(
        {
          providers: [
            { kind: 'mock', id: 'mock', models: ['demo', 'other'] },
            { kind: 'openai-compatible', id: 'vendor', models: ['m'], baseUrl: vendor.url, apiKeyRef: { env: 'AD_VENDOR_KEY' } },
          ],
          tokens: [
            { id: 'main', subject: 'test-user', tokenRef: { env: 'AD_TEST_TOKEN' }, providers: ['mock', 'vendor'], sessions: ['create', 'read', 'continue', 'delete'] },
            { id: 'restricted', subject: 'test-user', tokenRef: { env: 'AD_TEST_RESTRICTED' }, providers: ['mock'], sessions: ['read'] },
            { id: 'other', subject: 'another-user', tokenRef: { env: 'AD_TEST_OTHER' }, providers: ['mock', 'vendor'], sessions: ['create', 'read', 'continue', 'delete'] },
          ],
          sessions: { retentionMs: 60_000 },
          ...overrides,
        },
        { store, env: { ...process.env, AD_TEST_TOKEN: 'test-token-0123456789abcdefghijklmnop', AD_TEST_RESTRICTED: 'restricted-token-0123456789abcdefghij', AD_TEST_OTHER: OTHER_TOKEN, AD_VENDOR_KEY: VENDOR_KEY } },
      );
      hosts.push(started);
      return started;
    }
    const post = async (h: TestHost, path: string, body: unknown, token?: string) => {
      const response = await fetch(`${h.url}${path}`, { method: 'POST', headers: { ...h.headers(), ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    };

    it('continues only at the current revision and replays the history to the provider', async () => {
      const h = await host(await openTestStore(engine));
      const created = await post(h, '/v1/sessions/create', { provider: 'vendor', model: 'm', mode: 'history', history: [{ role: 'user', content: 'I am Ada.' }, { role: 'assistant', content: 'Hello Ada.' }] });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.deepEqual([created.body.session.revision, created.body.session.state, typeof created.body.session.expiresAt], [0, 'ready', 'string']);
      const id = created.body.session.id as string;
      vendor.push({ turn: { text: 'You are Ada.' } }, { turn: { text: 'Still Ada.' } });
      const first = await post(h, '/v1/runs', { provider: 'vendor', model: 'm', input: 'Who am I?', session: { id, revision: 0 } });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual([first.body.text, first.body.session.id, first.body.session.revision, first.body.session.state], ['You are Ada.', id, 1, 'ready']);
      const stale = await post(h, '/v1/runs', { provider: 'vendor', model: 'm', input: 'again', session: { id, revision: 0 } });
      assert.deepEqual([stale.status, stale.body.error.code], [409, 'SESSION_REVISION_CONFLICT']);
      const mismatch = await post(h, '/v1/runs', { provider: 'mock', model: 'demo', input: 'again', session: { id, revision: 1 } });
      assert.deepEqual([mismatch.status, mismatch.body.error.code], [409, 'SESSION_PROVIDER_MISMATCH']);
      const second = await post(h, '/v1/runs', { provider: 'vendor', model: 'm', input: 'And now?', session: { id, revision: 1 } });
      assert.equal(second.body.session.revision, 2);
      const sent = vendor.generations.at(-1)!.body.messages.map((message: { role: string; content: string }) => [message.role, message.content]);
      const read = await post(h, '/v1/sessions/read', { id });
      assert.deepEqual(
        read.body.history.map((message: { role: string; content: string }) => message.content),
        ['I am Ada.', 'Hello Ada.', 'Who am I?', 'You are Ada.', 'And now?', 'Still Ada.'],
      );
      assert.deepEqual(
        sent.map((message: string[]) => message[1]),
        ['I am Ada.', 'Hello Ada.', 'Who am I?', 'You are Ada.', 'And now?'],
      );
    });

    it('refuses a busy turn, shows it running without expiry, and ends it SESSION_DELETED when deleted', async () => {
      const h = await host(await openTestStore(engine));
      const { body } = await post(h, '/v1/sessions/create', { provider: 'mock', model: 'demo', mode: 'history' });
      const id = body.session.id as string;
      const hang = { provider: 'mock', model: 'demo', input: script([{ text: 'thinking' }, { hang: true }]), session: { id, revision: 0 } };
      const response = await fetch(`${h.url}/v1/runs`, { method: 'POST', headers: h.headers({ accept: 'text/event-stream' }), body: JSON.stringify(hang) });
      const events = sseEvents(response);
      for (let next = await events.next(); !next.done && next.value.type !== 'text.delta'; next = await events.next());
      const busy = await post(h, '/v1/runs', { ...hang, input: 'me too' });
      assert.deepEqual([busy.status, busy.body.error.code], [409, 'SESSION_BUSY']);
      const running = await post(h, '/v1/sessions/read', { id });
      assert.deepEqual([running.body.session.state, running.body.session.expiresAt], ['running', undefined]);
      const deleted = await post(h, '/v1/sessions/delete', { id });
      assert.deepEqual(deleted.body, { id, deleted: true });
      let last: Record<string, unknown> | undefined;
      for (let next = await events.next(); !next.done; next = await events.next()) last = next.value;
      assert.deepEqual([last?.type, (last?.error as { code: string }).code], ['run.cancelled', 'SESSION_DELETED']);
      const gone = await post(h, '/v1/sessions/read', { id });
      assert.deepEqual([gone.status, gone.body.error.code], [404, 'SESSION_NOT_FOUND']);
    });

    it('leaves a session interrupted when a turn fails after the model was asked', async () => {
      const h = await host(await openTestStore(engine));
      const { body } = await post(h, '/v1/sessions/create', { provider: 'mock', model: 'demo', mode: 'history' });
      const id = body.session.id as string;
      const failed = await post(h, '/v1/runs', { provider: 'mock', model: 'demo', input: script([{ error: { code: 'PROVIDER_ERROR' } }]), session: { id, revision: 0 } });
      assert.equal(failed.body.error.code, 'PROVIDER_ERROR');
      assert.equal((await post(h, '/v1/sessions/read', { id })).body.session.state, 'interrupted');
      const next = await post(h, '/v1/runs', { provider: 'mock', model: 'demo', input: 'again', session: { id, revision: 0 } });
      assert.deepEqual([next.status, next.body.error.code], [409, 'SESSION_INTERRUPTED']);
    });

    it('belongs to its subject and checks each grant; refuses requests that bring their own history', async () => {
      const h = await host(await openTestStore(engine));
      const { body } = await post(h, '/v1/sessions/create', { provider: 'mock', model: 'demo', mode: 'history' });
      const id = body.session.id as string;
      for (const path of ['/v1/sessions/read', '/v1/sessions/delete']) {
        const other = await post(h, path, { id }, OTHER_TOKEN);
        assert.deepEqual([other.status, other.body.error.code], [404, 'SESSION_NOT_FOUND']);
      }
      const restricted = 'restricted-token-0123456789abcdefghij';
      assert.equal((await post(h, '/v1/sessions/read', { id }, restricted)).status, 200);
      const noContinue = await post(h, '/v1/runs', { provider: 'mock', model: 'demo', input: 'x', session: { id, revision: 0 } }, restricted);
      assert.deepEqual([noContinue.status, noContinue.body.error.code], [403, 'FORBIDDEN']);
      const noCreate = await post(h, '/v1/sessions/create', { provider: 'mock', model: 'demo', mode: 'history' }, restricted);
      assert.deepEqual([noCreate.status, noCreate.body.error.code], [403, 'FORBIDDEN']);
      const ownHistory = await post(h, '/v1/runs', { provider: 'mock', model: 'demo', input: 'x', history: [{ role: 'user', content: 'y' }], session: { id, revision: 0 } });
      assert.deepEqual([ownHistory.status, ownHistory.body.error.code], [400, 'SESSION_HISTORY_CONFLICT']);
      const forged = await post(h, '/v1/sessions/create', { provider: 'mock', model: 'demo', mode: 'history', subject: 'someone-else' });
      assert.deepEqual([forged.status, forged.body.error.code], [400, 'INVALID_SESSION']);
      const native = await post(h, '/v1/sessions/create', { provider: 'mock', model: 'demo', mode: 'native' });
      assert.deepEqual([native.status, native.body.error.code], [400, 'UNSUPPORTED_CONTINUATION']);
      // API providers replay history; only providers that advertise nativeContinuation take native sessions.
      const nativeApi = await post(h, '/v1/sessions/create', { provider: 'vendor', model: 'm', mode: 'native' });
      assert.deepEqual([nativeApi.status, nativeApi.body.error.code], [400, 'UNSUPPORTED_CONTINUATION']);
      // Nothing was spent: the session is still at revision 0, ready.
      assert.deepEqual([(await post(h, '/v1/sessions/read', { id })).body.session.revision, (await post(h, '/v1/sessions/read', { id })).body.session.state], [0, 'ready']);
    });

    it('continues alternately through two hosts on one store (PostgreSQL), and across a restart', async () => {
      const state = await sharedState(engine);
      const a = await host(await state.open());
      // SQLite is one process's file: the second host is the first one restarted.
      const b = engine === 'postgres' ? await host(await state.open()) : undefined;
      const { body } = await post(a, '/v1/sessions/create', { provider: 'mock', model: 'demo', mode: 'history' });
      const id = body.session.id as string;
      let revision = 0;
      let current = a;
      for (let index = 0; index < 4; index += 1) {
        if (b) current = index % 2 === 0 ? a : b;
        else if (index === 2) {
          await a.close();
          current = await host(await state.open());
        }
        const turn = await post(current, '/v1/runs', { provider: 'mock', model: 'demo', input: `turn ${index}`, session: { id, revision } });
        assert.equal(turn.status, 200, JSON.stringify(turn.body));
        revision = turn.body.session.revision as number;
      }
      assert.equal(revision, 4);
      const history = (await post(current, '/v1/sessions/read', { id })).body.history as { content: string }[];
      assert.deepEqual(history.map((message) => message.content), ['turn 0', 'turn 0', 'turn 1', 'turn 1', 'turn 2', 'turn 2', 'turn 3', 'turn 3']);
    });
  });
}
