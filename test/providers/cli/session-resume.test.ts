/**
 * Native-mode session turns on the real CLIs against the loopback vendor servers: the second
 * turn resumes the CLI's own conversation (the vendor sees the first exchange as the CLI's own
 * messages, not as our replayed transcript); with the session's folder gone (another replica)
 * the turn replays the history and still succeeds; forgetting the session removes its folder.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { claudeCode } from '../../../src/providers/cli/claude-code.js';
import { codex } from '../../../src/providers/cli/codex.js';
import { geminiCli } from '../../../src/providers/cli/gemini-cli.js';
import { chooseRunBase } from '../../../src/providers/cli/workspace.js';
import type { ProviderAdapter, ProviderContinuation, ProviderMessage, ProviderRequest } from '../../../src/providers/contract/v1.js';
import { startAnthropicMessagesServer, startGeminiServer, startOpenAIResponsesServer, type VendorServer, type VendorServerOptions } from '../../vendors/index.js';
import { API_KEY, binary, claudeAccount, codexAccount, drain, geminiAccount, hostEnvironment, scratchDirectory, startRefusingProxy, type RefusingProxy } from './harness.js';

const TIMEOUT = { timeout: 120_000 };

interface Spoken {
  role: 'user' | 'assistant';
  text: string;
}

interface Kind {
  name: string;
  product: string;
  model: string;
  startServer(options: VendorServerOptions): Promise<VendorServer>;
  account(server: VendorServer, directory: string): Promise<string>;
  adapter(server: VendorServer, account: string, proxy: RefusingProxy): Promise<ProviderAdapter>;
  /** The conversation a model request carried, in the vendor's shape. */
  spoken(body: any): Spoken[];
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((part: any) => (typeof part?.text === 'string' ? part.text : '')).join('') : '';

const KINDS: Kind[] = [
  {
    name: 'codex',
    product: 'Codex CLI',
    model: 'gpt-5.5',
    startServer: startOpenAIResponsesServer,
    account: (server, directory) => codexAccount(directory, server.url),
    adapter: async (server, account, proxy) =>
      codex({
        binary: binary('codex'),
        models: ['gpt-5.5'],
        accountDirectory: account,
        environment: async () => ({ LOOPBACK_OPENAI_KEY: API_KEY }),
        hostEnvironment: hostEnvironment(proxy),
      }),
    spoken: (body) =>
      (Array.isArray(body.input) ? body.input : [])
        .filter((item: any) => item.role === 'user' || item.role === 'assistant')
        .map((item: any) => ({ role: item.role, text: textOf(item.content) })),
  },
  {
    name: 'claude-code',
    product: 'Claude Code',
    model: 'claude-test',
    startServer: startAnthropicMessagesServer,
    account: (_server, directory) => claudeAccount(directory),
    adapter: async (server, account, proxy) =>
      claudeCode({
        binary: binary('claude'),
        models: ['claude-test'],
        accountDirectory: account,
        environment: async () => ({ ANTHROPIC_BASE_URL: server.origin, ANTHROPIC_API_KEY: API_KEY }),
        hostEnvironment: hostEnvironment(proxy),
      }),
    spoken: (body) => (Array.isArray(body.messages) ? body.messages : []).map((message: any) => ({ role: message.role, text: textOf(message.content) })),
  },
  {
    name: 'gemini-cli',
    product: 'Gemini CLI',
    model: 'gemini-2.5-flash',
    startServer: startGeminiServer,
    account: (_server, directory) => geminiAccount(directory),
    adapter: async (server, account, proxy) =>
      geminiCli({
        binary: binary('gemini'),
        models: ['gemini-2.5-flash'],
        accountDirectory: account,
        environment: async () => ({ GOOGLE_GEMINI_BASE_URL: server.origin, GEMINI_API_KEY: API_KEY }),
        hostEnvironment: hostEnvironment(proxy),
      }),
    spoken: (body) =>
      (Array.isArray(body.contents) ? body.contents : []).map((content: any) => ({ role: content.role === 'model' ? 'assistant' : 'user', text: textOf(content.parts) })),
  },
];

/** A session as the host keeps it: the visible history and the adapter's saved state, committed together. */
class Session {
  readonly id = randomUUID();
  readonly history: ProviderMessage[] = [];
  state: string | undefined;
  private saved: string | undefined;

  request(input: string, model: string): ProviderRequest {
    this.saved = undefined;
    const continuation: ProviderContinuation = {
      sessionId: this.id,
      ...(this.state === undefined ? {} : { state: this.state }),
      historyLength: this.history.length,
      retentionMs: 60_000,
      save: (state) => {
        this.saved = state;
      },
    };
    return { model, messages: [...this.history, { role: 'user', content: input }], tools: [], maxOutputTokens: 1024, continuation };
  }

  commit(input: string, reply: string): void {
    this.history.push({ role: 'user', content: input }, { role: 'assistant', content: reply });
    this.state = this.saved;
  }
}

const listTree = async (root: string): Promise<string[]> => (await readdir(root, { recursive: true })).map(String).sort();
const exists = (path: string) => lstat(path).then(() => true, () => false);

for (const kind of KINDS) {
  describe(`${kind.name}: native session turns (real CLI, loopback model server)`, () => {
    let server: VendorServer;
    let proxy: RefusingProxy;
    let scratch: { path: string; remove(): Promise<void> };
    let adapter: ProviderAdapter;
    let base: string;
    let account: string;
    let accountFiles: string[];

    before(async () => {
      server = await kind.startServer({ apiKey: API_KEY });
      proxy = await startRefusingProxy();
      scratch = await scratchDirectory(`${kind.name}-resume`);
      account = await kind.account(server, await mkdtemp(join(scratch.path, 'account-')));
      accountFiles = await listTree(account);
      adapter = await kind.adapter(server, account, proxy);
      base = await chooseRunBase({ product: kind.product });
    });
    after(async () => {
      await adapter.close?.();
      const accountAfter = await listTree(account);
      await server.close();
      await proxy.close();
      await scratch.remove();
      assert.deepEqual(proxy.attempts, []);
      // The CLI's saved conversations (Codex sessions/, Claude projects/, Gemini chats/) lived only in the sessions' private folders.
      const added = accountAfter.filter((path) => !accountFiles.includes(path));
      assert.deepEqual(added.filter((path) => /(^|\/)(sessions|projects|chats)(\/|$)|\.jsonl$|rollout-/.test(path)), [], added.join(', '));
    });

    test('advertises native continuation', () => {
      assert.equal(adapter.info.capabilities.nativeContinuation, true);
    });

    test('the second turn resumes the CLI conversation; a lost folder replays; forgetting removes the folder', TIMEOUT, async () => {
      const session = new Session();
      const folder = join(base, `session-${session.id}`);

      server.push({ turn: { text: 'Noted: kiwi.', usage: { input: 5, output: 3 } } });
      const first = await drain(adapter, session.request('Remember the word kiwi.', kind.model));
      assert.equal(first.error, undefined, first.error?.message);
      assert.equal(first.text, 'Noted: kiwi.');
      session.commit('Remember the word kiwi.', first.text);
      assert.ok(session.state, 'the first turn saved the CLI conversation');
      assert.ok(await exists(folder), 'the session folder outlives the run');
      assert.equal(((await lstat(folder)).mode & 0o777).toString(8), '700');

      server.push({ turn: { text: 'The word was kiwi.', usage: { input: 9, output: 4 } } });
      const second = await drain(adapter, session.request('Which word?', kind.model));
      assert.equal(second.error, undefined, second.error?.message);
      assert.equal(second.text, 'The word was kiwi.');
      const resumed = kind.spoken(server.generations.at(-1)!.body);
      // The CLI's own record of turn one: the user's words and the model's reply as separate messages.
      assert.ok(resumed.some((m) => m.role === 'user' && m.text.includes('Remember the word kiwi.') && !m.text.includes('Which word?')), JSON.stringify(resumed));
      assert.ok(resumed.some((m) => m.role === 'assistant' && m.text.includes('Noted: kiwi.')), JSON.stringify(resumed));
      assert.ok(!resumed.some((m) => m.text.includes('assistant:\nNoted')), 'no replayed transcript');
      assert.ok(resumed.at(-1)?.role === 'user' && resumed.at(-1)!.text.includes('Which word?'));
      session.commit('Which word?', second.text);
      const saved = session.state;

      // A third turn resumes the conversation the second one continued (both earlier exchanges, the CLI's own).
      server.push({ turn: { text: 'Kiwi, again.', usage: { input: 12, output: 3 } } });
      const third = await drain(adapter, session.request('Once more?', kind.model));
      assert.equal(third.error, undefined, third.error?.message);
      const chained = kind.spoken(server.generations.at(-1)!.body);
      assert.ok(chained.some((m) => m.role === 'user' && m.text.includes('Which word?') && !m.text.includes('Once more?')), JSON.stringify(chained));
      assert.ok(chained.some((m) => m.role === 'assistant' && m.text.includes('The word was kiwi.')), JSON.stringify(chained));
      session.commit('Once more?', third.text);
      assert.equal(session.state, saved, 'a resumed turn keeps the same CLI conversation');

      // Another replica: no folder here. The turn replays the visible history into a new conversation.
      await rm(folder, { recursive: true, force: true });
      server.push({ turn: { text: 'Still kiwi.', usage: { input: 12, output: 2 } } });
      const fourth = await drain(adapter, session.request('And now?', kind.model));
      assert.equal(fourth.error, undefined, fourth.error?.message);
      assert.equal(fourth.text, 'Still kiwi.');
      const replayed = kind.spoken(server.generations.at(-1)!.body).filter((m) => m.role === 'user');
      assert.ok(replayed.some((m) => m.text.includes('assistant:\nKiwi, again.') && m.text.includes('And now?')), JSON.stringify(replayed));
      session.commit('And now?', fourth.text);
      assert.notEqual(session.state, saved, 'the replay started a new CLI conversation');
      assert.ok(await exists(folder));

      await adapter.forgetSession!(session.id);
      assert.equal(await exists(folder), false, 'deleting the session removes its folder');
      assert.deepEqual((await readdir(base)).filter((name) => name.includes(session.id)), []);
    });

    test('a resume the CLI cannot do (its saved conversation lost) fails before any output and falls back to the replay', TIMEOUT, async () => {
      const session = new Session();
      server.push({ turn: { text: 'Alpha.', usage: { input: 1, output: 1 } } });
      const first = await drain(adapter, session.request('Say alpha.', kind.model));
      assert.equal(first.error, undefined, first.error?.message);
      session.commit('Say alpha.', first.text);
      // The folder still names the conversation, but the CLI's files are gone.
      await rm(join(base, `session-${session.id}`, 'home'), { recursive: true, force: true });
      const before = server.generations.length;
      server.push({ turn: { text: 'Beta.', usage: { input: 1, output: 1 } } });
      const second = await drain(adapter, session.request('Say beta.', kind.model));
      assert.equal(second.error, undefined, second.error?.message);
      assert.equal(second.text, 'Beta.');
      assert.equal(server.generations.length, before + 1, 'the failed resume never reached the model');
      const users = kind.spoken(server.generations.at(-1)!.body).filter((m) => m.role === 'user');
      assert.ok(users.some((m) => m.text.includes('assistant:\nAlpha.') && m.text.includes('Say beta.')), JSON.stringify(users));
      session.commit('Say beta.', second.text);
      await adapter.forgetSession!(session.id);
    });

    test('deleted during its turn: the folder goes once the turn has ended', TIMEOUT, async () => {
      const session = new Session();
      const folder = join(base, `session-${session.id}`);
      const requests = server.requests.length;
      server.push({ hang: true });
      const controller = new AbortController();
      const running = drain(adapter, session.request('Wait for me.', kind.model), controller.signal).catch((error: unknown) => ({ thrown: error }));
      while (server.requests.length === requests) await new Promise((resolve) => setTimeout(resolve, 25));
      await adapter.forgetSession!(session.id);
      assert.ok(await exists(folder), 'the running CLI keeps its folder until it stops');
      controller.abort(new Error('session deleted'));
      await running;
      assert.equal(await exists(folder), false);
    });

    test('a saved state the folder does not hold (replayed elsewhere since) replays', TIMEOUT, async () => {
      const session = new Session();
      server.push({ turn: { text: 'One.', usage: { input: 1, output: 1 } } });
      const first = await drain(adapter, session.request('Count: one.', kind.model));
      assert.equal(first.error, undefined, first.error?.message);
      session.commit('Count: one.', first.text);
      session.state = 'a-conversation-of-another-replica';
      server.push({ turn: { text: 'Two.', usage: { input: 1, output: 1 } } });
      const second = await drain(adapter, session.request('Count: two.', kind.model));
      assert.equal(second.error, undefined, second.error?.message);
      const users = kind.spoken(server.generations.at(-1)!.body).filter((m) => m.role === 'user');
      assert.ok(users.some((m) => m.text.includes('assistant:\nOne.')), JSON.stringify(users));
      session.commit('Count: two.', second.text);
      assert.notEqual(session.state, 'a-conversation-of-another-replica');
      await adapter.forgetSession!(session.id);
      assert.equal(await exists(join(base, `session-${session.id}`)), false);
    });
  });
}
