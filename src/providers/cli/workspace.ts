/**
 * A private, empty directory tree per CLI run: `work/` (the cwd) and `tmp/` (TMPDIR).
 * It lives under a per-user directory rather than the shared temp folder, because Gemini
 * CLI ignores settings files whose parent directories are writable by others (as /tmp is).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunWorkspace {
  root: string;
  workDir: string;
  tmpDir: string;
  remove(): Promise<void>;
}

function privateBase(): string {
  const runtime = process.env.XDG_RUNTIME_DIR;
  return runtime ? join(runtime, 'agenticdriver') : join(homedir(), '.cache', 'agenticdriver', 'cli-runs');
}

async function baseDirectory(): Promise<string> {
  const base = privateBase();
  try {
    await mkdir(base, { recursive: true, mode: 0o700 });
    return base;
  } catch {
    return tmpdir();
  }
}

export async function createRunWorkspace(): Promise<RunWorkspace> {
  const root = await mkdtemp(join(await baseDirectory(), 'run-'));
  const workDir = join(root, 'work');
  const tmpDir = join(root, 'tmp');
  await mkdir(workDir, { mode: 0o700 });
  await mkdir(tmpDir, { mode: 0o700 });
  return {
    root,
    workDir,
    tmpDir,
    remove: () => rm(root, { recursive: true, force: true, maxRetries: 3 }),
  };
}
