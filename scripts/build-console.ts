/**
 * Builds the operator console (console/) into dist/console: one ES module bundle (Preact, the
 * app and the TypeScript client from src/client, no source maps, no inline script), the page
 * and its stylesheet. `npm run build` calls it after tsc; the host serves these three files at
 * /console.
 *
 * The page's CSP forbids generating code, so the client's Ajv validators cannot compile in the
 * browser: the bundle gets console/src/validators.ts in place of src/protocol/validate.ts, over
 * validators compiled here with Ajv's standalone code — those of the endpoints the console
 * calls (the operator endpoints and the provider list), the error envelope and the events.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
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
    plugins: [precompiledValidation],
  });
  await copyFile(join(source, 'index.html'), join(outDir, 'index.html'));
  await copyFile(join(source, 'app.css'), join(outDir, 'app.css'));
}

if (process.argv[1] === import.meta.filename) await buildConsole(process.argv[2]);
