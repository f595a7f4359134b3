/**
 * The cross-language conformance harness: for each transport, starts the reference peer,
 * the live host and (https) the TLS traps, runs every driver in conformance/drivers/<lang>/run,
 * and prints per language/mode/transport counts. See conformance/CONTRACT.md.
 *
 *   npx tsx conformance/run.ts [--language <lang>] [--transport http|https]
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { newTokens, startLiveHost, type LiveHost } from './live-host.js';
import { readJson, skipReason, type ConformanceVectors, type SkipList, type VersioningVectors } from './peer/fixtures.js';
import { startPeer } from './peer/server.js';
import { startMismatchTrap, startUntrustedTrap, type TlsTrap } from './tls-traps.js';
import { makeThrowawayPki, type ThrowawayPki } from '../test/support/pki.js';

type Transport = 'http' | 'https';

interface Report {
  language: string;
  mode: string;
  transport: string;
  passed: number;
  failed: number;
  skipped: number;
  failures: { id: string; detail: string }[];
}

const root = new URL('..', import.meta.url).pathname;
const FIXTURES = join(root, 'protocol', 'fixtures', 'conformance.json');
const VERSIONING = join(root, 'protocol', 'fixtures', 'versioning.json');
const BASE_URLS = join(root, 'protocol', 'fixtures', 'base-url.json');
const SKIP = join(root, 'conformance', 'skip.json');
const DRIVERS = join(root, 'conformance', 'drivers');
const DRIVER_TIMEOUT_MS = 10 * 60_000;

const { values: args } = parseArgs({ options: { language: { type: 'string' }, transport: { type: 'string' } } });
if (args.transport && args.transport !== 'http' && args.transport !== 'https') {
  console.error(`--transport must be http or https, not ${args.transport}`);
  process.exit(2);
}
const transports: Transport[] = args.transport ? [args.transport as Transport] : ['http', 'https'];

function findDrivers(): string[] {
  if (!existsSync(DRIVERS)) return [];
  return readdirSync(DRIVERS)
    .filter((language) => !args.language || language === args.language)
    .filter((language) => {
      try {
        accessSync(join(DRIVERS, language, 'run'), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    })
    .sort();
}

function runDriver(language: string, transport: Transport, env: Record<string, string>): Promise<Report[]> {
  const label = `${language}/${transport}`;
  return new Promise((resolve) => {
    const child = spawn(join(DRIVERS, language, 'run'), [], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const reports: Report[] = [];
    let pending = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), DRIVER_TIMEOUT_MS);
    const takeLine = (line: string) => {
      const parsed = parseReport(line);
      if (parsed) reports.push(parsed);
      else if (line.trim()) process.stderr.write(`[${label}] ${line}\n`);
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      lines.forEach(takeLine);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => process.stderr.write(chunk.replace(/^(?=.)/gm, `[${label}] `)));
    const finish = (detail: string | undefined) => {
      clearTimeout(timer);
      takeLine(pending);
      if (reports.length === 0) {
        reports.push({ language, mode: '-', transport, passed: 0, failed: 1, skipped: 0, failures: [{ id: 'driver', detail: detail ?? 'the driver printed no report line' }] });
      } else if (detail && reports.every((report) => report.failed === 0)) {
        reports.push({ language, mode: '-', transport, passed: 0, failed: 1, skipped: 0, failures: [{ id: 'driver', detail }] });
      }
      resolve(reports);
    };
    child.on('error', (error) => finish(`could not start: ${error.message}`));
    child.on('close', (code, signal) => finish(code === 0 ? undefined : `exited with ${code ?? signal}`));
  });
}

function parseReport(line: string): Report | undefined {
  if (!line.startsWith('{"conformance"')) return undefined;
  try {
    const report = (JSON.parse(line) as { conformance: Report }).conformance;
    return typeof report.passed === 'number' ? report : undefined;
  } catch {
    return undefined;
  }
}

async function runTransport(transport: Transport, drivers: string[], pki: ThrowawayPki | undefined): Promise<Report[]> {
  const tokens = newTokens();
  const tls = transport === 'https' ? pki!.trusted : undefined;
  const live = await startLiveHost(tokens, tls && { certFile: tls.certFile, keyFile: tls.keyFile });
  const liveHost: LiveHost | undefined = typeof live === 'string' ? undefined : live;
  if (typeof live === 'string') console.error(`!! ${transport}: no live host (${live}); live scenarios will fail with HOST_UNAVAILABLE.`);
  const peer = await startPeer({
    token: tokens.main,
    vectors: readJson<ConformanceVectors>(FIXTURES),
    versioning: readJson<VersioningVectors>(VERSIONING),
    tls: tls && { cert: tls.cert, key: tls.key },
    liveMetrics: liveHost && (() => liveHost.runs()),
  });
  const traps: TlsTrap[] = transport === 'https' ? [await startUntrustedTrap(pki!.untrusted), await startMismatchTrap(pki!.trusted)] : [];
  const env: Record<string, string> = {
    AGENTICDRIVER_TEST_TRANSPORT: transport,
    AGENTICDRIVER_TEST_REFERENCE_URL: peer.url,
    AGENTICDRIVER_TEST_URL: liveHost?.url ?? `${peer.url}/no-live-host`,
    AGENTICDRIVER_TEST_TOKEN: tokens.main,
    AGENTICDRIVER_TEST_RESTRICTED_TOKEN: tokens.restricted,
    AGENTICDRIVER_TEST_FIXTURES: FIXTURES,
    AGENTICDRIVER_TEST_VERSIONING: VERSIONING,
    AGENTICDRIVER_TEST_BASE_URLS: BASE_URLS,
    AGENTICDRIVER_TEST_SKIP: SKIP,
    ...(tls && {
      AGENTICDRIVER_TEST_CA_FILE: tls.caFile,
      AGENTICDRIVER_TEST_UNTRUSTED_URL: traps[0]!.url,
      AGENTICDRIVER_TEST_MISMATCH_URL: traps[1]!.url,
    }),
  };
  const reports: Report[] = [];
  try {
    for (const language of drivers) {
      console.log(`--- ${language} over ${transport}`);
      reports.push(...(await runDriver(language, transport, env)));
    }
  } finally {
    await Promise.all([peer.close(), liveHost?.close(), ...traps.map((trap) => trap.close())]);
  }
  const harnessFailures: Report['failures'] = [];
  if (peer.metrics.redirectTargetHits > 0) harnessFailures.push({ id: 'redirect-target', detail: `the redirect target was hit ${peer.metrics.redirectTargetHits} times` });
  traps.forEach((trap) => {
    if (trap.requests() > 0) harnessFailures.push({ id: `tls:${trap.url}`, detail: `${trap.requests()} HTTP requests got through an unverifiable TLS handshake` });
  });
  reports.push({ language: 'harness', mode: '-', transport, passed: 1 + traps.length - harnessFailures.length, failed: harnessFailures.length, skipped: 0, failures: harnessFailures });
  return reports;
}

function printTable(reports: Report[]): void {
  const rows = [['language', 'mode', 'transport', 'passed', 'failed', 'skipped'], ...reports.map((r) => [r.language, r.mode, r.transport, String(r.passed), String(r.failed), String(r.skipped)])];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  console.log('');
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
  for (const report of reports) {
    for (const failure of report.failures.slice(0, 50)) console.log(`FAIL ${report.language}/${report.mode}/${report.transport} ${failure.id}: ${failure.detail}`);
    if (report.failures.length > 50) console.log(`... and ${report.failures.length - 50} more failures for ${report.language}/${report.mode}/${report.transport}`);
  }
}

/** Why cases are skipped, with how many each reason covers (per driver run). */
function printSkipList(): void {
  const skip = readJson<SkipList>(SKIP);
  const reasons = new Map<string, number>();
  for (const testCase of [...readJson<ConformanceVectors>(FIXTURES).cases, ...readJson<VersioningVectors>(VERSIONING).cases]) {
    const reason = skipReason(skip, testCase);
    if (reason) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const total = [...reasons.values()].reduce((sum, count) => sum + count, 0);
  console.log(`\nskip.json skips ${total} cases in every driver run:`);
  for (const [reason, count] of reasons) console.log(`  ${String(count).padStart(3)}  ${reason}`);
}

const drivers = findDrivers();
if (drivers.length === 0) console.error(`!! no executable driver found under ${DRIVERS}${args.language ? ` for ${args.language}` : ''}`);
const pki = transports.includes('https') ? makeThrowawayPki() : undefined;
const reports: Report[] = [];
try {
  for (const transport of transports) reports.push(...(await runTransport(transport, drivers, pki)));
} finally {
  pki?.remove();
}
printTable(reports);
printSkipList();
const total = (key: 'passed' | 'failed' | 'skipped') => reports.reduce((sum, report) => sum + report[key], 0);
const failed = total('failed') + (drivers.length === 0 ? 1 : 0);
console.log(`${total('passed')} passed, ${failed} failed, ${total('skipped')} skipped`);
process.exit(failed > 0 ? 1 : 0);
