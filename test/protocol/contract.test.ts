import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_STATUS, statusForCode } from '../../src/protocol/errors.js';

const root = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the wire contract', () => {
  it('published documents match src/protocol (npm run protocol regenerates them)', () => {
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/generate-protocol.ts', '--check'], { cwd: root, stdio: 'pipe' });
  });

  it('gives every error code the product can raise an explicit status', () => {
    const raised = new Set<string>();
    for (const file of sources(join(root, 'src'))) {
      for (const match of readFileSync(file, 'utf8').matchAll(/new DriverError\(\s*'([A-Z_]+)'/g)) raised.add(match[1]!);
    }
    assert.ok(raised.size > 20);
    const missing = [...raised].filter((code) => !(code in ERROR_STATUS));
    assert.deepEqual(missing, []);
  });

  it('maps the families of spec decision 1', () => {
    const expected: Record<string, number> = {
      INVALID_REQUEST: 400,
      UNAUTHORIZED: 401,
      FORBIDDEN: 403,
      ORIGIN_DENIED: 403,
      NOT_FOUND: 404,
      SESSION_REVISION_CONFLICT: 409,
      JOB_EXPIRED: 410,
      BODY_TOO_LARGE: 413,
      BUSY: 429,
      INTERNAL_ERROR: 500,
      PROVIDER_ERROR: 502,
      HOST_SHUTTING_DOWN: 503,
      IDLE_TIMEOUT: 504,
    };
    for (const [code, status] of Object.entries(expected)) assert.equal(statusForCode(code), status, code);
    assert.equal(statusForCode('SOMETHING_NEW'), 500, 'a host never invents codes; an unknown one is an internal fault');
  });

  it('documents /v1/runs as JSON and SSE with the shared error envelope', () => {
    const openapi = JSON.parse(readFileSync(join(root, 'protocol/openapi.json'), 'utf8')) as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
      components: { schemas: Record<string, unknown> };
    };
    assert.equal(openapi.openapi, '3.1.0');
    const run = openapi.paths['/v1/runs']!.post!;
    assert.ok(run.responses['200']!.content!['text/event-stream']);
    assert.ok(run.responses['200']!.content!['application/json']);
    for (const name of ['RunRequest', 'RunResult', 'RunEvent', 'ErrorEnvelope', 'RunStartedEvent', 'RunCancelledEvent']) {
      assert.ok(openapi.components.schemas[name], name);
    }
  });
});
