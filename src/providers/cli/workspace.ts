/** A private, empty directory tree per CLI run: `work/` (the cwd) and `tmp/` (TMPDIR). */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunWorkspace {
  root: string;
  workDir: string;
  tmpDir: string;
  remove(): Promise<void>;
}

export async function createRunWorkspace(): Promise<RunWorkspace> {
  const root = await mkdtemp(join(tmpdir(), 'agenticdriver-cli-'));
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
