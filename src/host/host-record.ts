/**
 * What a host keeps about itself in its local state folder, for everyone else on this machine:
 * `host.json` (pid, machine, config and, once it listens, its URL), where the folders are (the
 * state directory for SQLite, one `replica-N` slot per PostgreSQL replica), and the usage
 * health and spool in them. Reads and plain writes only: the lock that makes a folder one
 * process's own is src/host/local-state.ts, which client commands never load.
 */
import { readdirSync } from 'node:fs';
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { UsageConfig } from '../extensions/usage/config.js';
import { usageSinkReport, type UsageSinkReport } from '../extensions/usage/report.js';

export const HOST_RECORD_FILE = 'host.json';
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

/** The replica slots (`replica-N`) in a state directory, in slot order. */
export function replicaSlots(base: string): string[] {
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

/** Writes the record atomically (a reader never sees half of it). */
export async function writeHostRecord(directory: string, record: HostRecord): Promise<void> {
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
