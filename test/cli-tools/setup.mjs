#!/usr/bin/env node
// Installs the pinned real agent CLIs for the CLI provider tests, once. Idempotent: when
// every pinned binary already answers `--version` with its pinned version, it does nothing.
// Usage: node test/cli-tools/setup.mjs   (prints the bin directory on the last line)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pinned = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')).dependencies;
const binDir = join(here, 'node_modules', '.bin');
const expected = [
  ['codex', `codex-cli ${pinned['@openai/codex']}`],
  ['claude', `${pinned['@anthropic-ai/claude-code']} (Claude Code)`],
  ['gemini', pinned['@google/gemini-cli']],
];

function installed() {
  const home = mkdtempSync(join(tmpdir(), 'ad-cli-tools-'));
  try {
    return expected.every(([bin, version]) => matches(bin, version, home));
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function matches(bin, version, home) {
  const probe = spawnSync(join(binDir, bin), ['--version'], {
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 30_000,
      env: { PATH: process.env.PATH, HOME: home, TMPDIR: home },
    cwd: home,
  });
  return probe.status === 0 && probe.stdout.toString().trim().split('\n').at(-1) === version;
}

if (!installed()) {
  execFileSync('npm', ['ci', '--prefix', here, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  if (!installed()) {
    console.error('cli-tools: the pinned CLIs did not install correctly');
    process.exit(1);
  }
}
console.log(binDir);
