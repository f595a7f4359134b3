/**
 * Extensions as plugins (docs/architecture.md, "Extensions"): the worked example of the docs —
 * one folder, one line in the list — runs in a real host; the host derives its config schema,
 * features and endpoints from the list; extensions start in the list's order and shut down in
 * reverse; an extension offering run services after the runtime was built is refused.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EXTENSIONS } from '../../src/extensions/index.js';
import { parseHostConfig } from '../../src/host/config.js';
import { hostConfigSchema } from '../../src/host/published-config-schema.js';
import { startHost } from '../../src/host/index.js';
import { defineExtension, type Extension } from '../../src/http/extension.js';
import { tempDir } from '../support/temp.js';
import { runLogExtension } from './fixtures/run-log/index.js';

const TOKEN = 'extension-token-0123456789abcdefghijklm';

/** Records when it starts, stops and closes, and whether the store is still open when it closes. */
function probe(id: string, events: string[]): Extension {
  return defineExtension({
    id,
    features: [],
    enabled: () => true,
    create({ store }) {
      events.push(`create ${id}`);
      return {
        start: () => void events.push(`start ${id}`),
        stop: async () => void events.push(`stop ${id}`),
        close: async () => {
          await store.usage.summary();
          events.push(`close ${id}`);
        },
      };
    },
  });
}

describe('extensions as plugins', () => {
  const dir = tempDir('agenticdriver-extensions-');
  const env = { ...process.env, AD_EXTENSION_TOKEN: TOKEN };
  const raw = (extra: Record<string, unknown> = {}) => ({
    version: 1,
    listen: { host: '127.0.0.1', port: 0 },
    providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
    tokens: [{ id: 'main', subject: 'alice', tokenRef: { env: 'AD_EXTENSION_TOKEN' }, providers: ['mock'] }],
    state: { directory: join(dir, 'state') },
    ...extra,
  });
  const run = (url: string) =>
    fetch(`${url}/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ provider: 'mock', model: 'demo', input: 'hello' }) });

  it('the worked example is one folder and one line: its config section is accepted (strictly) and it observes every run', async () => {
    const extensions = [...EXTENSIONS, runLogExtension];
    assert.ok('runLog' in hostConfigSchema(extensions).properties, 'the section joins the derived schema');
    assert.throws(() => parseHostConfig(raw({ runLog: { path: 'runs.jsonl' } }), join(dir, 'config.json')), { code: 'INVALID_CONFIG' }, 'unknown without the extension in the list');
    assert.throws(() => parseHostConfig(raw({ runLog: { path: 'runs.jsonl', extra: 1 } }), join(dir, 'config.json'), extensions), { code: 'INVALID_CONFIG' });
    const config = parseHostConfig(raw({ runLog: { path: 'runs.jsonl' } }), join(dir, 'config.json'), extensions);
    const host = await startHost({ config, env, extensions, logger: false });
    try {
      const response = await run(host.url);
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { text: string }).text.length > 0, true);
    } finally {
      await host.close();
    }
    const lines = (await readFile(join(dir, 'runs.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { status: string; provider: string });
    assert.deepEqual(lines.map((line) => [line.provider, line.status]), [['mock', 'completed']]);
  });

  it('starts extensions in the list order and shuts them down in reverse, the store closing last', async () => {
    const events: string[] = [];
    const extensions = [probe('first', events), ...EXTENSIONS, probe('last', events)];
    const host = await startHost({ config: parseHostConfig(raw(), join(dir, 'config.json'), extensions), env, extensions, logger: false });
    assert.deepEqual(events, ['create first', 'create last', 'start first', 'start last']);
    await host.close();
    assert.deepEqual(events.slice(4), ['stop first', 'stop last', 'close last', 'close first']);
  });

  it('advertises and serves only what the extensions that are on offer', async () => {
    const plain = await startHost({ config: parseHostConfig(raw(), join(dir, 'config.json')), env, logger: false });
    try {
      const protocol = (await (await fetch(`${plain.url}/v1/protocol`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { features: string[] };
      assert.ok(protocol.features.includes('idempotency'), 'on by default');
      for (const feature of ['durable-jobs', 'conversation-sessions', 'interactive-approvals', 'scoped-retrieval', 'operator-endpoints']) assert.ok(!protocol.features.includes(feature), feature);
      const jobs = await fetch(`${plain.url}/v1/jobs/submit`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{}' });
      assert.equal(jobs.status, 404);
      const anonymous = await fetch(`${plain.url}/v1/jobs/submit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(anonymous.status, 401, 'an unknown target is answered only after authentication');
    } finally {
      await plain.close();
    }
  });

  it('refuses to start when an extension offers run services after the runtime was built', async () => {
    const late = defineExtension({ id: 'late', features: [], enabled: () => true, create: () => ({ run: { onUsage: () => undefined } }) });
    const extensions = [...EXTENSIONS, late];
    const config = parseHostConfig(raw({ sessions: { retentionMs: 60_000 } }), join(dir, 'config.json'), extensions);
    await assert.rejects(startHost({ config, env, extensions, logger: false }), /Extension late offers run services after the runtime was built/);
  });
});
