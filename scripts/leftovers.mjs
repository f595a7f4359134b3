// What the test run left behind: new entries in the system temp dir (top level), in the
// private temp dir the stages ran with, and anywhere under ~/.cache/agenticdriver.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

// The empty folders the product keeps for its run directories: made once, by design.
const KEPT = [/\/\.cache\/agenticdriver$/, /\/\.cache\/agenticdriver\/cli-runs$/];

function entries(dir, recursive) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return recursive && entry.isDirectory() ? [path, ...entries(path, true)] : [path];
  });
}

const isCache = (dir) => dir.endsWith('/.cache/agenticdriver');

/** Paths present now under each folder (the temp dir only at its top level). */
export function snapshot(dirs) {
  return new Set(dirs.flatMap((dir) => (isCache(dir) ? [dir, ...entries(dir, true)] : entries(dir, false))));
}

export function leftovers(before, dirs, privateTmp) {
  const now = [...snapshot(dirs)].filter((path) => path !== privateTmp && !before.has(path));
  return [...now, ...entries(privateTmp, false)].filter((path) => !KEPT.some((kept) => kept.test(path))).sort();
}
