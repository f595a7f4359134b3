/**
 * Secret references: config files name where a secret lives (`env` or a private `file`),
 * never the secret itself. Values are never logged or echoed in errors.
 */
import { open, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { DriverError } from '../protocol/errors.js';
import type { SecretRef } from './secret-ref.js';

export type { SecretRef } from './secret-ref.js';

const MAX_SECRET_FILE_BYTES = 65_536;

export function describeSecretRef(ref: SecretRef): string {
  return 'env' in ref ? `environment variable ${ref.env}` : `file ${ref.file}`;
}

/** Reads a secret; a missing one is the empty string (callers decide what that means). */
export async function readSecret(ref: SecretRef, baseDir: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if ('env' in ref) return (env[ref.env] ?? '').trim();
  const path = isAbsolute(ref.file) ? ref.file : resolve(baseDir, ref.file);
  let info;
  try {
    info = await stat(path);
  } catch {
    return '';
  }
  if (!info.isFile()) throw new DriverError('SECRET_PERMISSIONS', `The secret ${describeSecretRef(ref)} is not a regular file.`);
  if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
    throw new DriverError('SECRET_PERMISSIONS', `The secret ${describeSecretRef(ref)} must not be readable by group or others (chmod 600).`);
  }
  if (info.size > MAX_SECRET_FILE_BYTES) throw new DriverError('SECRET_TOO_LARGE', `The secret ${describeSecretRef(ref)} is too large.`);
  const handle = await open(path, 'r');
  try {
    const bytes = await handle.readFile();
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).trim();
  } catch (error) {
    if (error instanceof DriverError) throw error;
    throw new DriverError('SECRET_UNAVAILABLE', `The secret ${describeSecretRef(ref)} could not be read as UTF-8 text.`);
  } finally {
    await handle.close();
  }
}
