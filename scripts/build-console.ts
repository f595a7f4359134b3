/**
 * Builds the operator console (console/) into dist/console: one ES module bundle (Preact and
 * the app, no source maps, no inline script), the page and its stylesheet. `npm run build`
 * (scripts/build.mjs) runs it when its inputs changed; the host serves these three files at /console.
 *
 *   node --import tsx scripts/build-console.ts [OUT_DIR] [INPUTS_FILE]
 *
 * INPUTS_FILE receives the files the bundle was made from (JSON, paths relative to the
 * repository), which scripts/build.mjs compares next time.
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { build } from 'esbuild';

const root = join(import.meta.dirname, '..');
const source = join(root, 'console');

/** Builds into `outDir`; resolves to the files read, relative to the repository. */
export async function buildConsole(outDir = join(root, 'dist', 'console')): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const { metafile } = await build({
    entryPoints: [join(source, 'src', 'main.tsx')],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
  });
  const copied = ['index.html', 'app.css'];
  for (const name of copied) await copyFile(join(source, name), join(outDir, name));
  // esbuild's metafile paths are relative to its working directory.
  const bundled = Object.keys(metafile.inputs).map((path) => relative(root, join(process.cwd(), path)));
  return [...bundled, ...copied.map((name) => relative(root, join(source, name)))];
}

if (process.argv[1] === import.meta.filename) {
  const inputs = await buildConsole(process.argv[2]);
  if (process.argv[3]) await writeFile(process.argv[3], JSON.stringify(inputs));
}
