/**
 * Writes the published wire documents under protocol/ from src/protocol (the single
 * source of truth), then the Go, Python and Rust clients' generated wire layers from the
 * published documents (scripts/protocol-clients/), and the TypeScript validators
 * compiled ahead of time (scripts/protocol-validators.ts). `--check` fails instead of
 * writing when any file has drifted.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ERROR_STATUS } from '../src/protocol/errors.js';
import { ENDPOINTS, MAX_CURSOR } from '../src/protocol/endpoints.js';
import { NAMED_SCHEMAS } from '../src/protocol/schemas.js';
import { OPTIONAL_EVENTS_HEADER, SUPPORTED_VERSIONS, VERSION_HEADER, WIRE_VERSION } from '../src/protocol/version.js';
import { hostConfigSchema } from '../src/host/published-config-schema.js';
import { clientFiles } from './protocol-clients/index.js';
import { OPERATIONS_DOCUMENT, operationsDocument } from './protocol-clients/operations.js';
import { RULES_DOCUMENT, rulesDocument } from './protocol-clients/rules.js';
import { validatorFiles } from './protocol-validators.js';

const root = join(dirname(new URL(import.meta.url).pathname), '..');

/** Plain JSON with TypeBox's symbols dropped and `$ref: "Name"` pointed at `prefix + Name`. */
function plain(schema: unknown, prefix: string, keepId = false): unknown {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => {
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) return `${prefix}${value}`;
    if (key === '$id' && !keepId) return undefined;
    return value;
  });
}

function named(prefix: string): Record<string, unknown> {
  return Object.fromEntries(NAMED_SCHEMAS.map((schema) => [schema.$id!, plain(schema, prefix)]));
}

function openapi(): unknown {
  const ref = (schema: { $id?: string }) => ({ $ref: `#/components/schemas/${schema.$id}` });
  const errorResponse = { description: 'Error envelope; the status for each code is in status-codes.json.', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of ENDPOINTS) {
    const content: Record<string, unknown> = endpoint.streamOnly ? {} : { 'application/json': { schema: ref(endpoint.response) } };
    if (endpoint.events) {
      // Each SSE frame as a parsed object; its `data` line is one JSON event.
      content['text/event-stream'] = {
        description: 'One `id:` (the sequence) / `event:` (the type) / `data:` (the event as JSON) frame per event; `: heartbeat` comments every 15 s.',
        schema: {
          type: 'object',
          required: ['data'],
          properties: { id: { type: 'string' }, event: { type: 'string' }, data: { type: 'string', contentMediaType: 'application/json', contentSchema: ref(endpoint.events) } },
        },
      };
    }
    const operation: Record<string, unknown> = {
      operationId: endpoint.operationId,
      summary: endpoint.summary,
      ...(endpoint.feature ? { 'x-agenticdriver-feature': endpoint.feature } : {}),
      ...(endpoint.public ? { security: [] } : {}),
      parameters: [
        ...(endpoint.public ? [] : [{ $ref: '#/components/parameters/Version' }, { $ref: '#/components/parameters/AcceptOptionalEvents' }]),
        ...(endpoint.pathParams ?? []).map((param) => ({ name: param.name, in: 'path', required: true, description: param.description, schema: param.schema })),
        ...(endpoint.query ?? []).map((query) => ({ name: query.name, in: 'query', required: false, description: query.description, schema: query.schema })),
        ...(endpoint.resumable ? [{ $ref: '#/components/parameters/LastEventId' }] : []),
      ],
      ...(endpoint.request ? { requestBody: { required: true, content: { 'application/json': { schema: ref(endpoint.request) } } } } : {}),
      responses: { '200': { description: 'Success', headers: { [VERSION_HEADER]: { $ref: '#/components/headers/Version' } }, content }, default: errorResponse },
    };
    paths[endpoint.path] = { ...paths[endpoint.path], [endpoint.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'AgenticDriver wire protocol', version: `${WIRE_VERSION}.0`, description: 'Generated from src/protocol; do not edit.' },
    servers: [{ url: 'http://127.0.0.1:7433', description: 'Local host (loopback)' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      parameters: {
        Version: { name: VERSION_HEADER, in: 'header', required: false, description: 'Absent selects 1.0; anything else unsupported is 400 UNSUPPORTED_PROTOCOL_VERSION.', schema: { enum: [...SUPPORTED_VERSIONS] } },
        AcceptOptionalEvents: { name: OPTIONAL_EVENTS_HEADER, in: 'header', required: false, description: 'Send `true` to receive advisory (`optional: true`) events.', schema: { enum: ['true', 'false'] } },
        LastEventId: {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          description: 'Resume after this sequence (the last event received). Anything but a whole number from 0 to 2^53 - 1 is 400 INVALID_JOB_CURSOR.',
          schema: { type: 'integer', minimum: 0, maximum: MAX_CURSOR },
        },
      },
      headers: { Version: { description: 'Wire version of every response, errors included.', schema: { const: WIRE_VERSION } } },
      schemas: named('#/components/schemas/'),
    },
  };
}

const wireSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://agenticdriver.dev/schemas/agenticdriver.schema.json',
  title: 'AgenticDriver wire protocol 1.0',
  $defs: named('#/$defs/'),
};

const documents: Record<string, unknown> = {
  'protocol/openapi.json': openapi(),
  'protocol/schemas/agenticdriver.schema.json': wireSchema,
  'protocol/status-codes.json': ERROR_STATUS,
  [OPERATIONS_DOCUMENT]: operationsDocument(),
  [RULES_DOCUMENT]: rulesDocument(),
  'protocol/host-config.schema.json': { $schema: 'https://json-schema.org/draft/2020-12/schema', ...(plain(hostConfigSchema(), '', true) as object) },
};

const files: Record<string, string> = Object.fromEntries(Object.entries(documents).map(([path, document]) => [path, `${JSON.stringify(document, null, 2)}\n`]));
// The clients are generated from the published documents as a reader of protocol/ sees them.
const published = (path: string): never => JSON.parse(files[path]!) as never;
Object.assign(
  files,
  clientFiles(
    {
      schema: published('protocol/schemas/agenticdriver.schema.json'),
      operations: published(OPERATIONS_DOCUMENT),
      status: published('protocol/status-codes.json'),
      rules: published(RULES_DOCUMENT),
      rulesText: files[RULES_DOCUMENT]!,
    },
    root,
  ),
);
// The TypeScript validators, compiled ahead of time from the same schemas.
Object.assign(files, validatorFiles());

const check = process.argv.includes('--check');
const drifted: string[] = [];
for (const [path, text] of Object.entries(files)) {
  const file = join(root, path);
  let current: string | undefined;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  if (check) drifted.push(path);
  else {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`wrote ${path}`);
  }
}
if (drifted.length > 0) {
  console.error(`Generated protocol documents or client wire layers are out of date: ${drifted.join(', ')}. Run \`npm run protocol\` and commit.`);
  process.exit(1);
}
if (check) console.log('protocol documents and client wire layers match src/protocol');
