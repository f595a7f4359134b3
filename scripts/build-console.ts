/**
 * Builds the operator console (console/) into dist/console: one ES module bundle (Preact, the
 * app and the TypeScript client from src/client, no source maps, no inline script), the page
 * and its stylesheet. `npm run build` (scripts/build.mjs) runs it when its inputs changed; the
 * host serves these three files at /console.
 *
 *   node --import tsx scripts/build-console.ts [OUT_DIR] [INPUTS_FILE]
 *
 * INPUTS_FILE receives the files the bundle was made from (JSON, paths relative to the
 * repository), which scripts/build.mjs compares next time.
 *
 * The client's validators (src/protocol/validate.ts) are the whole table of
 * protocol/validators/wire.js; the bundle gets console/src/validators.ts in their place, over
 * validators compiled here with Ajv's standalone code — only those of the endpoints the console
 * calls (the operator endpoints and the provider list), the error envelope and the events.
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { build, type Plugin } from 'esbuild';
import { ENDPOINTS } from '../src/protocol/endpoints.js';
import { EVENT_SCHEMAS, NAMED_SCHEMAS } from '../src/protocol/schemas.js';

const root = join(import.meta.dirname, '..');
const source = join(root, 'console');
const VIRTUAL = 'virtual:console-validators';

// CommonJS modules whose default export arrives wrapped under NodeNext.
const unwrap = <T>(module: unknown): T => (module as { default?: T }).default ?? (module as T);
const addFormats = unwrap<(ajv: Ajv2020) => unknown>(addFormatsModule);
const standaloneCode = unwrap<(ajv: Ajv2020, exports: Record<string, string>) => string>(standaloneModule);

/** Schema ids the console's calls check: the operator endpoints, the provider list, errors and events. */
export function consoleSchemaIds(): string[] {
  const used = ENDPOINTS.filter((entry) => entry.feature === 'operator-endpoints' || entry.operationId === 'listProviders');
  const ids = used.flatMap((entry) => [entry.request?.$id, entry.response.$id, entry.events?.$id]);
  ids.push('ErrorEnvelope', 'EventEnvelope', ...Object.values(EVENT_SCHEMAS).map((schema) => schema.$id));
  return [...new Set(ids.filter((id): id is string => id !== undefined))].sort();
}

function compiledValidators(): string {
  // The same options as src/protocol/validate.ts; refs as functions of their own keep the code small.
  const ajv = new Ajv2020({ allErrors: false, strict: false, validateFormats: true, inlineRefs: false, code: { source: true, esm: true } });
  addFormats(ajv);
  for (const schema of NAMED_SCHEMAS) ajv.addSchema(schema as object);
  return standaloneCode(ajv, Object.fromEntries(consoleSchemaIds().map((id) => [id, id])));
}

/** The client's validate module → the precompiled one; the virtual module → the compiled code. */
const precompiledValidation: Plugin = {
  name: 'precompiled-validation',
  setup(builder) {
    builder.onResolve({ filter: /\/protocol\/validate\.js$/ }, () => ({ path: join(source, 'src', 'validators.ts') }));
    builder.onResolve({ filter: new RegExp(`^${VIRTUAL}$`) }, () => ({ path: VIRTUAL, namespace: 'console-validators' }));
    builder.onLoad({ filter: /.*/, namespace: 'console-validators' }, () => ({ contents: compiledValidators(), loader: 'js', resolveDir: root }));
  },
};

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
    plugins: [precompiledValidation],
    metafile: true,
  });
  const copied = ['index.html', 'app.css'];
  for (const name of copied) await copyFile(join(source, name), join(outDir, name));
  // esbuild's metafile paths are relative to its working directory; the compiled validators'
  // virtual module (`namespace:path`) is made from src/protocol, whose files the bundle reads too.
  const bundled = Object.keys(metafile.inputs)
    .filter((path) => !path.startsWith('console-validators:'))
    .map((path) => relative(root, join(process.cwd(), path)));
  return [...bundled, ...copied.map((name) => relative(root, join(source, name)))];
}

if (process.argv[1] === import.meta.filename) {
  const inputs = await buildConsole(process.argv[2]);
  if (process.argv[3]) await writeFile(process.argv[3], JSON.stringify(inputs));
}
