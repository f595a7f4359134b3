/**
 * The one place the tests start a browser. By default the headless Chromium shipped in
 * the `@sparticuz/chromium` npm package runs under playwright-core, so no system browser
 * is needed. A system Chromium is used only when AGENTICDRIVER_CHROMIUM names one.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import Chromium from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';

const root = new URL('../..', import.meta.url).pathname;
// Unpacked once and kept beside the package, never in the temp dir, so repeated test runs
// neither pay for the unpacking again nor leave anything in the temp dir.
const cacheParent = join(root, 'node_modules', '.cache');
const cacheDir = join(cacheParent, 'agenticdriver-chromium-153');

// Flags of the package's list (made for AWS Lambda) that we drop: the first three switch off
// the same-origin policy, which the browser test checks; `--single-process` crashes the
// browser (SIGTRAP) when a page's context closes, and a normal host does not need it.
const DROPPED_FLAGS = new Set(['--disable-web-security', '--allow-running-insecure-content', '--disable-site-isolation-trials', '--single-process']);

/** The package unpacks into os.tmpdir(); point it at a staging folder, then move that into place whole. */
async function unpackPackagedChromium(): Promise<string> {
  const binary = join(cacheDir, 'chromium');
  if (existsSync(binary)) return binary;
  await mkdir(cacheParent, { recursive: true });
  const staging = await mkdtemp(join(cacheParent, 'unpack-'));
  const savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  try {
    const unpacked = await Chromium.executablePath();
    if (unpacked !== join(staging, 'chromium')) throw new Error(`@sparticuz/chromium unpacked to ${unpacked}, expected ${staging}`);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  } finally {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
  }
  // Another process may have won the race; its copy is as good as ours.
  await rename(staging, cacheDir).catch(() => rm(staging, { recursive: true, force: true }));
  return binary;
}

export async function launchChromium(): Promise<Browser> {
  const system = process.env.AGENTICDRIVER_CHROMIUM;
  if (system) {
    if (!existsSync(system)) throw new Error(`AGENTICDRIVER_CHROMIUM names ${system}, which does not exist`);
    return chromium.launch({ executablePath: system, args: ['--no-sandbox', '--disable-gpu'] });
  }
  const executablePath = await unpackPackagedChromium();
  const args = Chromium.args.filter((flag) => !DROPPED_FLAGS.has(flag));
  // This build (made for AWS Lambda) has crashed while starting on a loaded machine (SIGSEGV
  // before any page; once in a CI run): a browser that never started is started once more.
  return chromium.launch({ executablePath, args }).catch(() => chromium.launch({ executablePath, args }));
}
