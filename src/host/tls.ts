/** The certificate (a file) and its private key (a secret reference) of `listen.tls`. */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { DriverError } from '../protocol/errors.js';
import { readSecret } from '../shared/secrets.js';
import type { HostConfig } from './config.js';

export async function loadTls(config: HostConfig, env: NodeJS.ProcessEnv): Promise<{ cert: string; key: string }> {
  const tls = config.listen.tls!;
  const certPath = isAbsolute(tls.certFile) ? tls.certFile : resolve(config.configDir, tls.certFile);
  let cert: string;
  try {
    cert = await readFile(certPath, 'utf8');
  } catch {
    throw new DriverError('INVALID_TLS', `The TLS certificate ${tls.certFile} could not be read.`);
  }
  const key = await readSecret(tls.keyRef, config.configDir, env);
  if (!key) throw new DriverError('INVALID_TLS', 'The TLS private key is missing or empty.');
  return { cert, key };
}
