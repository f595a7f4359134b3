// Loaded with --import in every Node process of the unit suite on the LTS Node (NODE_OPTIONS,
// set by scripts/lts-node.mjs): `better-sqlite3` resolves to the copy built for this Node's ABI
// ($AGENTICDRIVER_LTS_SQLITE) instead of node_modules' build for the system's Node.
import { register } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const sqlite = process.env.AGENTICDRIVER_LTS_SQLITE;
if (sqlite) {
  const source = `
    const target = ${JSON.stringify(pathToFileURL(join(sqlite, 'lib', 'index.js')).href)};
    export async function resolve(specifier, context, next) {
      if (specifier === 'better-sqlite3') return { url: target, format: 'commonjs', shortCircuit: true };
      return next(specifier, context);
    }`;
  register(`data:text/javascript,${encodeURIComponent(source)}`);
}
