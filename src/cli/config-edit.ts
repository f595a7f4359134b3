/**
 * Safe edits of the config file for `providers …` and `tokens …`: the file must be valid
 * before, the edited text is checked exactly as the host checks it before anything is
 * written, and the write is atomic (a private temp file beside it, fsynced, renamed over it)
 * keeping the file's mode. Edits change only the values they name (jsonc-parser), so the
 * rest of the file keeps its order and layout. Nothing here reads or prints a secret.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { applyEdits, modify, type FormattingOptions, type JSONPath } from 'jsonc-parser';
import { DriverError } from '../protocol/errors.js';
import { parseHostConfigText } from '../host/config.js';

const MAX_CONFIG_BYTES = 1_000_000;

/** One value to set (`value` undefined removes it); `append` adds `value` at the end of the array at `path`. */
export interface ConfigChange {
  path: JSONPath;
  value: unknown;
  append?: boolean;
}

/** The config as the file says it (what edits refer to), once the host would accept it. */
export interface ConfigDocument {
  raw: { providers: { id: string; kind: string }[]; tokens: { id: string; providers: string[]; [grant: string]: unknown }[]; [section: string]: unknown };
}

async function readText(path: string): Promise<{ text: string; mode: number }> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new DriverError(missing ? 'CONFIG_NOT_FOUND' : 'INVALID_CONFIG', missing ? `No config file at ${path}; create one with \`agenticdriver init\`.` : `The config at ${path} could not be read.`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new DriverError('INVALID_CONFIG', `The config at ${path} is not a regular file.`);
    if (info.size > MAX_CONFIG_BYTES) throw new DriverError('INVALID_CONFIG', `The config at ${path} is larger than ${MAX_CONFIG_BYTES} bytes.`);
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(await handle.readFile()), mode: info.mode & 0o777 };
  } catch (error) {
    if (error instanceof DriverError) throw error;
    throw new DriverError('INVALID_CONFIG', `The config at ${path} could not be read as UTF-8 text.`);
  } finally {
    await handle.close();
  }
}

/** Reads the config and checks it as the host does. */
export async function readConfigDocument(path: string): Promise<ConfigDocument & { text: string; mode: number }> {
  const { text, mode } = await readText(path);
  await parseHostConfigText(text, path);
  return { raw: JSON.parse(text) as ConfigDocument['raw'], text, mode };
}

/** The file's own indentation, so inserted values look like the rest. */
function formattingOf(text: string): FormattingOptions {
  const indent = /\n([ \t]+)"/.exec(text)?.[1] ?? '  ';
  return { insertSpaces: !indent.startsWith('\t'), tabSize: indent.startsWith('\t') ? 1 : indent.length, eol: text.includes('\r\n') ? '\r\n' : '\n' };
}

/**
 * Applies the changes `plan` makes from the current config, checks the result and writes it
 * atomically; returns what `plan` returned. Throws (and writes nothing) when the result would
 * be invalid or the file changed meanwhile.
 */
export async function editConfig<R>(path: string, plan: (document: ConfigDocument) => { changes: ConfigChange[]; result: R }): Promise<R> {
  const before = await readConfigDocument(path);
  const { changes, result } = plan(before);
  const formattingOptions = formattingOf(before.text);
  let text = before.text;
  for (const change of changes) {
    const edits = modify(text, change.append ? [...change.path, -1] : change.path, change.value, { formattingOptions, isArrayInsertion: change.append === true });
    text = applyEdits(text, edits);
  }
  try {
    await parseHostConfigText(text, path);
  } catch (error) {
    if (error instanceof DriverError) throw new DriverError(error.code, `Nothing was written: the change would leave the config invalid. ${error.message}`);
    throw error;
  }
  await replaceFile(path, text, before.mode, before.text);
  return result;
}

/** Writes `text` beside `path` and renames it over `path`, unless `path` no longer holds `expected`. */
async function replaceFile(path: string, text: string, mode: number, expected: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.chmod(mode); // the umask may have narrowed it
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if ((await readFile(path, 'utf8')) !== expected) {
      throw new DriverError('CONFIG_WRITE_FAILED', `${path} changed while it was being edited; nothing was written. Run the command again.`, { retryable: true });
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    if (error instanceof DriverError) throw error;
    throw new DriverError('CONFIG_WRITE_FAILED', `Could not write ${path}: ${(error as NodeJS.ErrnoException).code ?? 'unknown error'}.`);
  }
  // The rename itself survives a crash once the folder is on disk (not every platform can open a folder).
  const folder = await open(dirname(path), 'r').catch(() => undefined);
  await folder?.sync().catch(() => undefined);
  await folder?.close();
}

/** What to tell the person after an edit: a running host applies it on SIGHUP. */
export const RELOAD_HINT = 'A running host applies this on SIGHUP (kill -HUP <pid of agenticdriver serve>) or at its next start.';
