/**
 * Scratch folders in the system temp dir that are removed when the test process exits.
 * Each test file runs in its own process, so nothing a file made outlives it, even when a
 * test fails halfway, a host that still holds files open is never closed, or the runner
 * stops the file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

function removeAll(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

process.once('exit', removeAll);
// The test runner stops a file that overran its timeout with a signal, which skips 'exit'.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    removeAll();
    process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
  });
}

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
