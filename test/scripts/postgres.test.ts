/**
 * The test PostgreSQL server (scripts/postgres.mjs) starts wherever the temp dir is: here its
 * folder lies under a 0700 folder (as a private TMPDIR does). As root, PostgreSQL refuses to
 * run as root and its user `nobody` cannot traverse that folder, so it runs through setpriv
 * with one capability to traverse it; as any other user it runs as that user.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { it } from 'node:test';
import pg from 'pg';
import { ROOT } from '../support/processes.js';
import { tempDir } from '../support/temp.js';

interface PostgresModule {
  startPostgres(parent: string): Promise<{ url: string; as: string; stop(): Promise<void> }>;
}

it('starts under a private (0700) folder, and stop() removes its cluster', async () => {
  const { startPostgres } = (await import(pathToFileURL(join(ROOT, 'scripts', 'postgres.mjs')).href)) as PostgresModule;
  const locked = tempDir('agenticdriver-private-tmp-');
  chmodSync(locked, 0o700);
  const parent = mkdtempSync(join(locked, 'run-'));
  const server = await startPostgres(parent);
  try {
    const root = process.getuid?.() === 0;
    assert.match(server.as, root ? /^nobody \(setpriv, dac_(read_search|override)\)$/ : /^this user$/);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT current_setting($1) AS directory', ['data_directory']);
      assert.ok(String(rows[0].directory).startsWith(parent), rows[0].directory);
    } finally {
      await client.end();
    }
  } finally {
    await server.stop();
  }
  assert.deepEqual(readdirSync(parent), []);
});
