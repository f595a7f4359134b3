/**
 * `agenticdriver init`: a working config for the embedded defaults (the `mock` provider,
 * SQLite state) and one bearer token in a private file. Never overwrites anything and
 * never prints the token.
 */
import { randomBytes } from 'node:crypto';
import { access, mkdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DriverError } from '../protocol/errors.js';
import { DEFAULT_PORT, parseHostConfig } from '../host/config.js';

export interface InitResult {
  configPath: string;
  tokenFile: string;
  provider: string;
  model: string;
}

export const LOCAL_TOKEN_ID = 'local';

export async function initConfig(configPath: string): Promise<InitResult> {
  if (await exists(configPath)) throw new DriverError('CONFIG_EXISTS', `${configPath} already exists; init never overwrites.`);
  const directory = dirname(configPath);
  const credentials = join(directory, 'credentials');
  await mkdir(credentials, { recursive: true, mode: 0o700 });
  const tokenFile = join(credentials, `${LOCAL_TOKEN_ID}.token`);
  const config = {
    $schema: 'https://agenticdriver.dev/schemas/host-config.json',
    version: 1,
    listen: { host: '127.0.0.1', port: DEFAULT_PORT },
    providers: [{ kind: 'mock', id: 'mock', models: ['demo'] }],
    tokens: [{ id: LOCAL_TOKEN_ID, subject: 'local', tokenRef: { file: `credentials/${LOCAL_TOKEN_ID}.token` }, providers: ['mock'], tools: [] }],
    state: { directory: 'state' },
  };
  parseHostConfig(config, configPath);

  await writeExclusive(tokenFile, `${randomBytes(32).toString('base64url')}\n`);
  try {
    await writeExclusive(configPath, `${JSON.stringify(config, null, 2)}\n`);
  } catch (error) {
    await unlink(tokenFile).catch(() => undefined);
    throw error;
  }
  return { configPath, tokenFile, provider: 'mock', model: 'demo' };
}

async function writeExclusive(path: string, text: string): Promise<void> {
  try {
    await writeFile(path, text, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new DriverError('CONFIG_EXISTS', `${path} already exists; init never overwrites.`);
    }
    throw new DriverError('CONFIG_WRITE_FAILED', `Could not write ${path}.`);
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
