/**
 * The host's local state folder belongs to one live process at a time.
 *
 * Everything a host keeps on its own disk beside the store — the usage journal and health, the
 * webhook spool, this record — lives in a folder it holds an exclusive OS lock on
 * (`host.lock`, src/store/sqlite/exclusive-lock.ts) for its whole life:
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
import { mkdirSync, readdirSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { DriverError } from '../protocol/errors.js';
import type { UsageConfig } from '../extensions/usage/config.js';
import { usageSinkReport, type UsageSinkReport } from '../extensions/usage/report.js';
import { tryExclusiveLock, type ExclusiveLock } from '../store/sqlite/exclusive-lock.js';

export const LOCK_FILE = 'host.lock';
export const HOST_RECORD_FILE = 'host.json';
export const MAX_REPLICA_SLOTS = 64;
const REPLICA_SLOT = /^replica-([1-9][0-9]?)$/;

export interface HostRecord {
  pid: number;
  hostname: string;
  startedAt: string;
  configPath: string;
  /** Absent until the host listens. */
  url?: string;
  consoleUrl?: string;
}

export interface LocalStateConfig {
  state: { engine: 'sqlite' | 'postgres' };
  stateDirectory: string;
  configPath: string;
}

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
export async function claimLocalState(config: LocalStateConfig, now: () => Date = () => new Date()): Promise<LocalState> {
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
  const record: HostRecord = { pid: process.pid, hostname: hostname(), startedAt: now().toISOString(), configPath: config.configPath };
  try {
    await writeRecord(directory, record);
  } catch (error) {
    lock.release();
    throw error;
  }
  let released = false;
  return {
    directory,
    slot,
    listening: (url, consoleUrl) => writeRecord(directory, { ...record, url, ...(consoleUrl ? { consoleUrl } : {}) }),
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

/** The replica slots in a state directory, in slot order. */
function replicaSlots(base: string): string[] {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return [];
  }
  return names
    .map((name) => ({ name, n: Number(REPLICA_SLOT.exec(name)?.[1]) }))
    .filter((entry) => Number.isInteger(entry.n))
    .sort((a, b) => a.n - b.n)
    .map((entry) => entry.name);
}

/** Every local state folder of a config: the state directory (SQLite), or its replica slots (PostgreSQL). */
export function localStateDirectories(config: LocalStateConfig): { directory: string; slot: string | undefined }[] {
  if (config.state.engine === 'sqlite') return [{ directory: config.stateDirectory, slot: undefined }];
  return replicaSlots(config.stateDirectory).map((slot) => ({ directory: join(config.stateDirectory, slot), slot }));
}

async function writeRecord(directory: string, record: HostRecord): Promise<void> {
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const target = join(directory, HOST_RECORD_FILE);
  const handle = await open(`${target}.tmp`, 'w', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(record)}\n`);
  } finally {
    await handle.close();
  }
  await rename(`${target}.tmp`, target);
}

/** The record in a local state folder, when it is readable and well formed. */
export async function readHostRecord(directory: string): Promise<HostRecord | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(join(directory, HOST_RECORD_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  const record = value as Partial<HostRecord> | null;
  if (
    !record ||
    typeof record !== 'object' ||
    !Number.isSafeInteger(record.pid) ||
    typeof record.hostname !== 'string' ||
    typeof record.startedAt !== 'string' ||
    typeof record.configPath !== 'string' ||
    (record.url !== undefined && typeof record.url !== 'string')
  ) {
    return undefined;
  }
  return record as HostRecord;
}

/** Whether a process with this id runs on this machine (signal 0 checks without sending). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The live host a config's state records, for clients on this machine: the first record whose
 * process runs here and that says where it listens. `stale` lists records left by dead processes.
 */
export async function findRecordedHost(config: LocalStateConfig): Promise<{ found?: { record: HostRecord & { url: string }; path: string }; stale: { path: string; pid: number }[] }> {
  const stale: { path: string; pid: number }[] = [];
  for (const { directory } of localStateDirectories(config)) {
    const record = await readHostRecord(directory);
    if (!record) continue;
    const path = join(directory, HOST_RECORD_FILE);
    if (record.hostname !== hostname() || !processAlive(record.pid)) {
      stale.push({ path, pid: record.pid });
      continue;
    }
    if (record.url) return { found: { record: record as HostRecord & { url: string }, path }, stale };
  }
  return { stale };
}

/** The usage sinks' report over every local state folder of a config (`doctor`, `status`). */
export async function usageReportOf(config: LocalStateConfig & { usage: UsageConfig | undefined; configDir: string }): Promise<UsageSinkReport> {
  const configured = config.usage?.webhook?.spoolDirectory;
  const spoolBase = configured ? resolve(config.configDir, configured) : config.stateDirectory;
  return usageSinkReport(config.usage, config.configDir, localStateDirectories(config), spoolBase);
}
