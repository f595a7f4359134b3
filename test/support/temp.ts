/**
 * Scratch folders in the system temp dir that are removed when the test process exits.
 * Each test file runs in its own process, so nothing a file made outlives it, even when a
 * test fails halfway, a host that still holds files open is never closed, or the runner
 * stops the file.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

function removeAll(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** This process's children: the hosts and CLIs a test started (a CLI leads its own process group, which goes with it). */
function killChildren(): void {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,pgid='], { encoding: 'utf8' }).split('\n');
  for (const [pid, ppid, pgid] of rows.map((row) => row.trim().split(/\s+/).map(Number))) {
    if (ppid === process.pid) {
      try {
        process.kill(pid === pgid ? -pid! : pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}

process.once('exit', removeAll);
// The test runner stops a file that overran its timeout with a signal, which skips 'exit'.
// The hosts and CLIs it started would live on (holding the runner's output pipe, so the
// runner would wait for them) and write into the removed folders, so they go first.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    killChildren();
    removeAll();
    process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
  });
}

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
