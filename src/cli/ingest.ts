/**
 * `agenticdriver ingest PATH…`: files and folders (recursively) of .md/.txt/.eml/.pdf, one
 * `POST /v1/retrieval/ingest` per file through the TypeScript client. A progress bar on a
 * terminal, one line per file otherwise; a summary; exit 1 when any file failed.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import { documentFromFile, INGESTIBLE_EXTENSIONS, sourceForFile } from '../extensions/retrieval/ingestion/files.js';
import { DriverError, toDriverError } from '../protocol/errors.js';
import { connect, located, type ClientOptions } from './remote.js';

export interface IngestOptions extends ClientOptions {
  corpus: string;
  json?: boolean;
}

interface FileEntry {
  path: string;
  /** The path the source id is made from: under the folder given (with its name), or the file's name. */
  name: string;
}

/** Every ingestible file under the given paths; a file named explicitly is always taken. */
export async function collectFiles(paths: string[]): Promise<FileEntry[]> {
  const files: FileEntry[] = [];
  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch {
      throw new DriverError('INVALID_ARGUMENT', `${path} does not exist.`);
    }
    if (info.isDirectory()) await walk(path, path, files);
    else files.push({ path, name: basename(path) });
  }
  return files;
}

async function walk(root: string, dir: string, files: FileEntry[]): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(root, path, files);
    else if (entry.isFile() && (INGESTIBLE_EXTENSIONS as readonly string[]).includes(extname(entry.name).toLowerCase())) {
      files.push({ path, name: join(basename(root), relative(root, path)) });
    }
  }
}

export async function ingestCommand(paths: string[], options: IngestOptions): Promise<void> {
  const files = await collectFiles(paths);
  if (files.length === 0) throw new DriverError('INVALID_ARGUMENT', `No ${INGESTIBLE_EXTENSIONS.join('/')} files under ${paths.join(', ')}.`);
  const client = await connect(options);
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  const bar = !options.json && process.stderr.isTTY ? new ProgressBar(files.length) : undefined;
  const counts = { indexed: 0, unchanged: 0, failed: 0 };
  try {
    for (const [index, file] of files.entries()) {
      if (controller.signal.aborted) throw new DriverError('CANCELLED', 'Ingestion was interrupted.');
      bar?.draw(index, file.name);
      let line: Record<string, unknown>;
      try {
        const bytes = await readFile(file.path);
        const source = sourceForFile(file.name, bytes);
        const document = await documentFromFile(file.path, bytes, source);
        const receipt = await client.ingestDocument({ corpus: options.corpus, document }, { signal: controller.signal });
        counts[receipt.status] += 1;
        line = { file: file.name, status: receipt.status, sourceId: receipt.sourceId, revision: receipt.revision, chunks: receipt.chunks };
      } catch (error) {
        if (controller.signal.aborted) throw new DriverError('CANCELLED', 'Ingestion was interrupted.');
        counts.failed += 1;
        line = { file: file.name, status: 'failed', error: located(toDriverError(error)).toJSON() };
      }
      bar?.clear();
      if (options.json) process.stdout.write(`${JSON.stringify(line)}\n`);
      else if (line.status === 'failed') {
        const failure = line.error as { code: string; message: string };
        process.stderr.write(`failed     ${file.name}: ${failure.code} ${failure.message}\n`);
      } else if (!bar) process.stdout.write(`${String(line.status).padEnd(10)} ${file.name} (${String(line.chunks)} chunks)\n`);
    }
    bar?.draw(files.length, '');
    bar?.clear();
  } finally {
    process.off('SIGINT', interrupt);
  }
  const summary = { corpus: options.corpus, files: files.length, ...counts };
  process.stdout.write(options.json ? `${JSON.stringify({ summary })}\n` : `${counts.indexed} indexed, ${counts.unchanged} unchanged, ${counts.failed} failed (corpus ${options.corpus})\n`);
  if (counts.failed > 0) process.exitCode = 1;
}

/** One redrawn stderr line: `[#####.....] 3/10 name`. */
class ProgressBar {
  private readonly width = 24;
  constructor(private readonly total: number) {}

  draw(done: number, name: string): void {
    const filled = Math.round((done / this.total) * this.width);
    const columns = process.stderr.columns ?? 80;
    const text = `[${'#'.repeat(filled)}${'.'.repeat(this.width - filled)}] ${done}/${this.total} ${name}`;
    process.stderr.write(`\r\x1b[2K${text.slice(0, Math.max(10, columns - 1))}`);
  }

  clear(): void {
    process.stderr.write('\r\x1b[2K');
  }
}
