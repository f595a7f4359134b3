import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isLoopbackHost, normalizeOrigin } from '../../src/shared/addresses.js';
import { parseHostConfig, readHostConfig, resolveConfigPath } from '../../src/host/config.js';
import { readSecret } from '../../src/shared/secrets.js';
import { DriverError } from '../../src/protocol/errors.js';
import { tempDir } from '../support/temp.js';

const valid = () => ({
  version: 1,
  providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
  tokens: [{ id: 'main', subject: 'me', tokenRef: { env: 'X' }, providers: ['mock'] }],
});

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof DriverError);
    return error.code;
  }
  return 'none';
}

describe('host config', () => {
  it('accepts the minimal config with loopback defaults', () => {
    const config = parseHostConfig(valid(), '/etc/agenticdriver/config.json');
    assert.deepEqual(config.listen, { host: '127.0.0.1', port: 7433 });
    assert.equal(config.stateDirectory, '/etc/agenticdriver/state');
  });

  it('rejects unknown fields, bad versions, duplicate ids, unknown grants and __proto__ keys', () => {
    const at = '/tmp/c.json';
    assert.equal(codeOf(() => parseHostConfig({ ...valid(), extra: 1 }, at)), 'INVALID_CONFIG');
    assert.equal(codeOf(() => parseHostConfig({ ...valid(), version: 2 }, at)), 'INVALID_CONFIG');
    assert.equal(codeOf(() => parseHostConfig({ ...valid(), providers: [...valid().providers, ...valid().providers] }, at)), 'INVALID_CONFIG');
    assert.equal(codeOf(() => parseHostConfig({ ...valid(), tokens: [{ ...valid().tokens[0], providers: ['ghost'] }] }, at)), 'INVALID_CONFIG');
    assert.equal(codeOf(() => parseHostConfig({ ...valid(), tokens: [{ ...valid().tokens[0], token: 'inline-secret-value' }] }, at)), 'INVALID_CONFIG');
    assert.equal(codeOf(() => parseHostConfig(JSON.parse('{"version":1,"__proto__":{"x":1}}'), at)), 'INVALID_CONFIG');
    assert.equal(codeOf(() => parseHostConfig({ ...valid(), providers: [{ kind: 'mystery', id: 'm', models: [] }] }, at)), 'INVALID_CONFIG');
  });

  it('never echoes secret-looking values in its messages', () => {
    try {
      parseHostConfig({ ...valid(), tokens: [{ ...valid().tokens[0], tokenRef: { env: 'X', value: 'sk-very-secret' } }] }, '/tmp/c.json');
      assert.fail('expected INVALID_CONFIG');
    } catch (error) {
      assert.ok(!(error as Error).message.includes('sk-very-secret'));
    }
  });

  it('requires TLS off loopback', () => {
    assert.equal(codeOf(() => parseHostConfig({ ...valid(), listen: { host: '0.0.0.0', port: 1 } }, '/tmp/c.json')), 'TLS_REQUIRED');
    assert.equal(codeOf(() => parseHostConfig({ ...valid(), listen: { host: '10.1.2.3', port: 1 } }, '/tmp/c.json')), 'TLS_REQUIRED');
    for (const host of ['localhost', '127.0.0.1', '127.3.2.1', '::1', '[::1]', '::ffff:127.0.0.1']) {
      assert.equal(isLoopbackHost(host), true, host);
    }
    for (const host of ['0.0.0.0', '::', '128.0.0.1', 'example.com', 'localhost.example.com', '::ffff:10.0.0.1']) {
      assert.equal(isLoopbackHost(host), false, host);
    }
    const tls = { certFile: 'cert.pem', keyRef: { file: 'key.pem' } };
    assert.equal(parseHostConfig({ ...valid(), listen: { host: '0.0.0.0', port: 1, tls } }, '/tmp/c.json').listen.tls?.certFile, 'cert.pem');
  });

  it('normalizes origins and refuses entries that are not origins', () => {
    assert.equal(normalizeOrigin('https://App.Example:443/'), 'https://app.example');
    assert.equal(normalizeOrigin('http://localhost:5173'), 'http://localhost:5173');
    for (const bad of ['https://app.example/path', 'app.example', 'ftp://x.y', 'https://u:p@x.y', 'https://x.y?q=1']) {
      assert.equal(normalizeOrigin(bad), undefined, bad);
    }
    const config = parseHostConfig({ ...valid(), allowedOrigins: ['https://A.example/', 'https://a.example'] }, '/tmp/c.json');
    assert.deepEqual(config.allowedOrigins, ['https://a.example']);
    assert.equal(codeOf(() => parseHostConfig({ ...valid(), allowedOrigins: ['https://a.example/app'] }, '/tmp/c.json')), 'INVALID_CONFIG');
  });

  it('finds the config: --config, then AGENTICDRIVER_CONFIG, then the per-user default (empty variables count as unset)', () => {
    assert.equal(resolveConfigPath('rel/c.json', { AGENTICDRIVER_CONFIG: '/env/c.json' }), join(process.cwd(), 'rel/c.json'));
    assert.equal(resolveConfigPath(undefined, { AGENTICDRIVER_CONFIG: '/env/c.json' }), '/env/c.json');
    if (process.platform === 'linux') {
      assert.equal(resolveConfigPath(undefined, { XDG_CONFIG_HOME: '/xdg' }), '/xdg/agenticdriver/config.json');
      assert.ok(resolveConfigPath(undefined, { AGENTICDRIVER_CONFIG: '', XDG_CONFIG_HOME: '' }).endsWith('/.config/agenticdriver/config.json'));
    }
  });

  it('reads config files strictly', async () => {
    const dir = tempDir('ad-config-');
    const file = join(dir, 'config.json');
    const read = async () => {
      try {
        await readHostConfig(file);
        return 'ok';
      } catch (error) {
        return (error as DriverError).code;
      }
    };
    assert.equal(await read(), 'CONFIG_NOT_FOUND');
    writeFileSync(file, '{ not json');
    assert.equal(await read(), 'INVALID_CONFIG');
    writeFileSync(file, Buffer.from([0x7b, 0xff, 0x7d]));
    assert.equal(await read(), 'INVALID_CONFIG');
    writeFileSync(file, JSON.stringify(valid()));
    assert.equal(await read(), 'ok');
  });
});

describe('host config: state', () => {
  const at = '/etc/agenticdriver/config.json';
  const messageOf = (state: unknown): string => {
    try {
      parseHostConfig({ ...valid(), state }, at);
    } catch (error) {
      assert.ok(error instanceof DriverError);
      assert.equal(error.code, 'INVALID_CONFIG');
      return error.message;
    }
    return 'accepted';
  };

  it('defaults to SQLite in the state folder beside the config', () => {
    const config = parseHostConfig(valid(), at);
    assert.deepEqual(config.state, { engine: 'sqlite', directory: '/etc/agenticdriver/state' });
    assert.equal(config.stateDirectory, '/etc/agenticdriver/state');
  });

  it('keeps the { directory } form, with or without engine "sqlite"', () => {
    for (const state of [{ directory: 'data' }, { engine: 'sqlite', directory: 'data' }]) {
      const config = parseHostConfig({ ...valid(), state }, at);
      assert.deepEqual(config.state, { engine: 'sqlite', directory: '/etc/agenticdriver/data' });
      assert.equal(config.stateDirectory, '/etc/agenticdriver/data');
    }
    assert.deepEqual(parseHostConfig({ ...valid(), state: { engine: 'sqlite' } }, at).state, { engine: 'sqlite', directory: '/etc/agenticdriver/state' });
  });

  it('takes PostgreSQL with the URL as a secret reference', () => {
    const env = parseHostConfig({ ...valid(), state: { engine: 'postgres', urlRef: { env: 'STATE_URL' } } }, at);
    assert.deepEqual(env.state, { engine: 'postgres', urlRef: { env: 'STATE_URL' } });
    assert.equal(env.stateDirectory, '/etc/agenticdriver/state');
    const file = parseHostConfig({ ...valid(), state: { engine: 'postgres', urlRef: { file: 'secrets/state-url' }, leaseMs: 5000 } }, at);
    assert.deepEqual(file.state, { engine: 'postgres', urlRef: { file: 'secrets/state-url' } });
    assert.equal(file.stateLeaseMs, 5000);
  });

  it('refuses bad state forms with a message that names the problem', () => {
    assert.match(messageOf({ engine: 'postgres' }), /\/state must have required property 'urlRef'/);
    assert.match(messageOf({ engine: 'postgres', url: 'postgres://u:secret@db/x' }), /\/state must have required property 'urlRef'/);
    assert.doesNotMatch(messageOf({ engine: 'postgres', url: 'postgres://u:secret@db/x' }), /secret@/);
    assert.match(messageOf({ engine: 'postgres', urlRef: { env: 'X' }, directory: 'data' }), /\/state has an unknown field "directory"/);
    assert.match(messageOf({ engine: 'postgres', urlRef: 'postgres://u:p@db/x' }), /\/state\/urlRef/);
    assert.match(messageOf({ engine: 'mysql' }), /\/state\/engine must be "sqlite" or "postgres"/);
    assert.match(messageOf({ engine: 'sqlite', urlRef: { env: 'X' } }), /\/state has an unknown field "urlRef"/);
    assert.match(messageOf({ directory: '' }), /\/state\/directory/);
    assert.match(messageOf({ engine: 'postgres', urlRef: { env: 'X' }, leaseMs: 1 }), /\/state\/leaseMs/);
    assert.match(messageOf('postgres'), /state/);
    assert.match(messageOf(null), /state/);
  });
});

describe('secret references', () => {
  it('reads env and private files, refuses files others can read', async () => {
    const dir = tempDir('ad-secret-');
    assert.equal(await readSecret({ env: 'AD_SECRET' }, dir, { AD_SECRET: ' value \n' }), 'value');
    assert.equal(await readSecret({ env: 'AD_MISSING' }, dir, {}), '');
    writeFileSync(join(dir, 'ok.key'), 'file-secret\n', { mode: 0o600 });
    assert.equal(await readSecret({ file: 'ok.key' }, dir), 'file-secret');
    writeFileSync(join(dir, 'open.key'), 'x');
    chmodSync(join(dir, 'open.key'), 0o644);
    await assert.rejects(readSecret({ file: 'open.key' }, dir), (error: DriverError) => error.code === 'SECRET_PERMISSIONS');
    assert.equal(await readSecret({ file: 'absent.key' }, dir), '');
  });
});
