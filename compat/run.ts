/**
 * Wire compatibility with the clients already installed (issue 27): builds the published
 * `agenticdriver` 0.1.0 crate from crates.io (compat/rust-0.1.0: the exact version, a committed
 * lockfile) and runs every one of its calls, blocking and async, against a live host of this
 * repository over HTTP and over verified HTTPS (a throwaway CA made here). See compat/README.md.
 *
 *   node --import tsx compat/run.ts [--transport http|https]
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { newTokens, startLiveHost } from '../conformance/live-host.js';
import { makeThrowawayPki } from '../test/support/pki.js';
import { makePdf } from '../test/extensions/ingestion/pdfs.js';

type Transport = 'http' | 'https';
interface CallOutcome {
  transport: Transport;
  client: string;
  call: string;
  ok: boolean;
  detail: string;
}

const root = new URL('..', import.meta.url).pathname;
const crate = join(root, 'compat', 'rust-0.1.0');
const targetDir = join(crate, 'target');
const binary = join(targetDir, 'debug', 'agenticdriver-compat-0-1-0');
const RUN_TIMEOUT_MS = 5 * 60_000;

const { values: args } = parseArgs({ options: { transport: { type: 'string' } } });
if (args.transport && args.transport !== 'http' && args.transport !== 'https') {
  console.error(`--transport must be http or https, not ${args.transport}`);
  process.exit(2);
}
const transports: Transport[] = args.transport ? [args.transport as Transport] : ['http', 'https'];

function build(): void {
  console.log('--- building agenticdriver 0.1.0 (crates.io, compat/rust-0.1.0/Cargo.lock)');
  const built = spawnSync('cargo', ['build', '--locked', '--quiet', '--manifest-path', join(crate, 'Cargo.toml')], {
    stdio: 'inherit',
    env: { ...process.env, CARGO_TARGET_DIR: targetDir },
  });
  if (built.status !== 0) {
    console.error(`cargo build failed (${built.status ?? built.signal})`);
    process.exit(1);
  }
}

function runCrate(transport: Transport, env: Record<string, string>): Promise<CallOutcome[]> {
  return new Promise((resolve) => {
    const child = spawn(binary, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const outcomes: CallOutcome[] = [];
    let pending = '';
    const take = (line: string) => {
      if (line.startsWith('{"compat"')) outcomes.push({ transport, ...(JSON.parse(line) as { compat: Omit<CallOutcome, 'transport'> }).compat });
      else if (line.trim()) console.error(`[${transport}] ${line}`);
    };
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      lines.forEach(take);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => process.stderr.write(chunk.replace(/^(?=.)/gm, `[${transport}] `)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      take(pending);
      if (code !== 0 && outcomes.every((outcome) => outcome.ok)) {
        outcomes.push({ transport, client: '-', call: 'process', ok: false, detail: `exited with ${code ?? signal}` });
      }
      resolve(outcomes);
    });
  });
}

build();
const pdf = Buffer.from(await makePdf([['Quarterly report'], ['The harbour ferry leaves at noon.']])).toString('base64');
const pki = transports.includes('https') ? makeThrowawayPki() : undefined;
const outcomes: CallOutcome[] = [];
try {
  for (const transport of transports) {
    const tokens = newTokens();
    const tls = transport === 'https' ? pki!.trusted : undefined;
    const host = await startLiveHost(tokens, tls && { certFile: tls.certFile, keyFile: tls.keyFile });
    if (typeof host === 'string') {
      outcomes.push({ transport, client: '-', call: 'host', ok: false, detail: host });
      continue;
    }
    console.log(`--- the 0.1.0 crate against ${host.url}`);
    try {
      outcomes.push(
        ...(await runCrate(transport, {
          COMPAT_URL: host.url,
          COMPAT_TOKEN: tokens.main,
          COMPAT_PDF_BASE64: pdf,
          ...(tls && { COMPAT_CA_FILE: tls.caFile }),
        })),
      );
    } finally {
      await host.close();
    }
  }
} finally {
  pki?.remove();
}

for (const outcome of outcomes) {
  console.log(`${outcome.ok ? 'pass' : 'FAIL'}  ${outcome.transport.padEnd(5)} ${outcome.client.padEnd(8)} ${outcome.call}${outcome.ok ? '' : `: ${outcome.detail}`}`);
}
const failed = outcomes.filter((outcome) => !outcome.ok).length;
console.log(`${outcomes.length - failed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
