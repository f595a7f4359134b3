/**
 * Builds the operator console (console/) into dist/console: one ES module bundle (Preact and
 * the app, no source maps, no inline script), the page and its stylesheet. `npm run build`
 * calls it after tsc; the host serves these three files at /console.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = join(import.meta.dirname, '..');
const source = join(root, 'console');

export async function buildConsole(outDir = join(root, 'dist', 'console')): Promise<void> {
  await mkdir(outDir, { recursive: true });
  await build({
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
  });
  await copyFile(join(source, 'index.html'), join(outDir, 'index.html'));
  await copyFile(join(source, 'app.css'), join(outDir, 'app.css'));
}

if (process.argv[1] === import.meta.filename) await buildConsole(process.argv[2]);
