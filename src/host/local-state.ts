/**
 * The host's local state folder belongs to one live process at a time.
 *
 * Everything a host keeps on its own disk beside the store — the usage journal and health, the
 * webhook spool, `host.json` — lives in a folder it holds an exclusive OS lock on
 * (`host.lock`, src/store/sqlite/exclusive-lock.ts) for its whole life (what the folders are and
 * what `host.json` holds: src/host/host-record.ts):
 *
 * - SQLite: the state directory itself (the database is one process's file). A second host on
 *   the same state is refused with `HOST_ALREADY_RUNNING`, naming the running one.
 * - PostgreSQL: replicas that share a config share the state directory, so each takes the
 *   first free slot `replica-N/` in it. A slot whose lock is free belongs to a process that has
 *   died; a starting replica adopts what such slots left (see `adoptOrphans`).
 *
 * `host.json` beside the lock records who holds it — pid, machine, config, and once listening
 * the URL — so that the CLI finds the host it belongs to and a refused start can name it.
 */
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DriverError } from '../protocol/errors.js';
import { tryExclusiveLock, type ExclusiveLock } from '../store/sqlite/exclusive-lock.js';
import { HOST_RECORD_FILE, readHostRecord, replicaSlots, writeHostRecord, type HostRecord, type LocalStateConfig } from './host-record.js';

export const LOCK_FILE = 'host.lock';
export const MAX_REPLICA_SLOTS = 64;

export interface LocalState {
  /** This process's own folder: the state directory (SQLite) or its replica slot (PostgreSQL). */
  readonly directory: string;
  /** PostgreSQL: the slot's name, `replica-N` (a configured webhook spool gets a subfolder per slot). */
  readonly slot: string | undefined;
  /** Records the URL the host listens on (the CLI reads it). */
  listening(url: string, consoleUrl: string | undefined): Promise<void>;
  /**
   * PostgreSQL: calls `adopt` for each other slot whose process died, holding that slot's lock
   * meanwhile, so that no starting replica takes it halfway. Returns how many were adopted.
   */
  adoptOrphans(adopt: (directory: string, slot: string) => Promise<unknown>): Promise<number>;
  /** Removes the record and lets go of the lock. */
  release(): Promise<void>;
}

/** Takes this process's local state folder, or refuses (`HOST_ALREADY_RUNNING`) while another live host holds it. */
export async function claimLocalState(config: LocalStateConfig): Promise<LocalState> {
  const base = config.stateDirectory;
  mkdirSync(base, { recursive: true, mode: 0o700 });
  let claimed: { directory: string; slot: string | undefined; lock: ExclusiveLock } | undefined;
  if (config.state.engine === 'sqlite') {
    const lock = lockIn(base);
    if (!lock) throw await alreadyRunning(base);
    claimed = { directory: base, slot: undefined, lock };
  } else {
    for (let n = 1; n <= MAX_REPLICA_SLOTS && !claimed; n += 1) {
      const slot = `replica-${n}`;
      const directory = join(base, slot);
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      const lock = lockIn(directory);
      if (lock) claimed = { directory, slot, lock };
    }
    if (!claimed) {
      throw new DriverError('HOST_ALREADY_RUNNING', `All ${MAX_REPLICA_SLOTS} replica slots in ${base} are held by running hosts; give further replicas their own state.directory.`);
    }
  }
  const { directory, slot, lock } = claimed;
  const record: HostRecord = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString(), configPath: config.configPath };
  try {
    await writeHostRecord(directory, record);
  } catch (error) {
    lock.release();
    throw error;
  }
  let released = false;
  return {
    directory,
    slot,
    listening: (url, consoleUrl) => writeHostRecord(directory, { ...record, url, ...(consoleUrl ? { consoleUrl } : {}) }),
    async adoptOrphans(adopt) {
      if (slot === undefined) return 0;
      let adopted = 0;
      for (const other of replicaSlots(base)) {
        if (other === slot) continue;
        const orphan = join(base, other);
        const held = lockIn(orphan);
        if (!held) continue; // alive (or being adopted by another replica right now)
        try {
          await adopt(orphan, other);
          await rm(join(orphan, HOST_RECORD_FILE), { force: true });
          adopted += 1;
        } finally {
          held.release();
        }
      }
      return adopted;
    },
    async release() {
      if (released) return;
      released = true;
      await rm(join(directory, HOST_RECORD_FILE), { force: true }).catch(() => undefined);
      lock.release();
    },
  };
}

function lockIn(directory: string): ExclusiveLock | undefined {
  try {
    return tryExclusiveLock(join(directory, LOCK_FILE));
  } catch (error) {
    throw new DriverError('INVALID_CONFIG', `The host lock ${join(directory, LOCK_FILE)} could not be taken: ${(error as Error).message}`, { cause: error });
  }
}

async function alreadyRunning(directory: string): Promise<DriverError> {
  const record = await readHostRecord(directory);
  const who = record ? describeHost(record) : `its record ${join(directory, HOST_RECORD_FILE)} is not readable`;
  const stop = record ? ` Stop it first (Ctrl-C in its terminal, or kill ${record.pid})` : ' Stop it first';
  return new DriverError(
    'HOST_ALREADY_RUNNING',
    `Another agenticdriver host already uses the state in ${directory} (${who}); two hosts on one SQLite state would take each other's runs.${stop}, talk to it with \`agenticdriver status${record ? ` --config ${record.configPath}` : ''}\`, or give this host its own state.directory.`,
  );
}

function describeHost(record: HostRecord): string {
  const where = record.url ? `listening on ${record.url}` : 'still starting';
  return `pid ${record.pid}${record.hostname !== hostname() ? ` on ${record.hostname}` : ''}, ${where}, started ${record.startedAt}, config ${record.configPath}`;
}
