/**
 * Scratch folders in the system temp dir that are removed when the test process exits.
 * Each test file runs in its own process, so nothing a file made outlives it, even when a
 * test fails halfway or a host that still holds files open is never closed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
