// Processes a test run left running. Every process of the run inherits a marker in its
// environment (AGENTICDRIVER_TEST_RUN, a value of this run's own); one that no longer descends
// from the test command has lost the process that started it (a test file stopped at its
// timeout leaves the hosts it spawned to init). Such a process is a leak: it also keeps the test runner waiting,
// since it holds the runner's output pipe. The watch kills each one it finds twice in a row
// (a process on its way out is not counted) and remembers it for the leftover report; sweep()
// at the end of a stage kills what is left at once. Linux only (/proc); elsewhere a no-op.
import { readFileSync, readdirSync } from 'node:fs';

export const MARKER = 'AGENTICDRIVER_TEST_RUN';

function read(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // gone, or not ours to read
  }
}

/** Every process carrying `marker`: pid -> { ppid, command }. */
function marked(marker) {
  const found = new Map();
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return found;
  }
  for (const pid of pids) {
    const environment = read(`/proc/${pid}/environ`);
    if (!environment?.split('\0').includes(`${MARKER}=${marker}`)) continue;
    const stat = read(`/proc/${pid}/stat`);
    if (!stat) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const command = (read(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ').trim().slice(0, 200);
    found.set(Number(pid), { ppid, command });
  }
  return found;
}

export class OrphanWatch {
  /** Every process killed so far: `pid command`. */
  killed = [];
  #suspects = new Set();
  #timer;

  /** `self`: the test command's pid (its parent never carries the marker). */
  constructor(marker, self = process.pid) {
    this.marker = marker;
    this.self = self;
  }

  /** Marked processes that do not descend from the test command (whole lost subtrees at once). */
  #orphans() {
    const all = marked(this.marker);
    const descends = (pid) => {
      for (let current = pid, hops = 0; hops < 64; hops += 1) {
        if (current === this.self) return true;
        const entry = all.get(current);
        if (!entry) return false;
        current = entry.ppid;
      }
      return false;
    };
    return [...all].filter(([pid]) => pid !== this.self && !descends(pid));
  }

  #kill(pid, command) {
    try {
      process.kill(pid, 'SIGKILL');
      this.killed.push(`${pid} ${command}`);
    } catch {
      // Already gone.
    }
  }

  /** Checks every `intervalMs` while a stage runs. */
  start(intervalMs = 5000) {
    this.#timer = setInterval(() => {
      const orphans = this.#orphans();
      for (const [pid, { command }] of orphans) if (this.#suspects.has(pid)) this.#kill(pid, command);
      this.#suspects = new Set(orphans.map(([pid]) => pid));
    }, intervalMs);
    this.#timer.unref();
  }

  stop() {
    clearInterval(this.#timer);
    this.#suspects.clear();
  }

  /** Kills every orphan now (a stage has ended: whatever of its processes is left has leaked). */
  sweep() {
    for (const [pid, { command }] of this.#orphans()) this.#kill(pid, command);
  }
}
