/**
 * Session folders: private (0700) under a qualifying base, refused for a non-UUID id, kept
 * between turns, and swept once idle past the session's retention (plus a grace), except for
 * sessions with a turn running in this process.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DriverError } from '../../../src/protocol/errors.js';
import { openSessionFolder, removeSessionFolder, resetSessionSweepClock, sweepSessionFolders } from '../../../src/providers/cli/session-folder.js';
import { chooseRunBase } from '../../../src/providers/cli/workspace.js';
import { scratchDirectory } from './harness.js';

const exists = (path: string) => lstat(path).then(() => true, () => false);

describe('session folders', () => {
  let base: string;
  let options: { product: string; bases: string[] };

  before(async () => {
    base = join(await chooseRunBase({ product: 'test' }), `sessions-test-${process.pid}`);
    await mkdir(base, { mode: 0o700 });
    options = { product: 'test', bases: [base] };
  });
  after(async () => {
    await rm(base, { recursive: true, force: true });
  });

  test('private, kept between opens with its conversation id, reset on demand, removed on delete', async () => {
    const id = randomUUID();
    const folder = await openSessionFolder(options, id, 60_000, new Set());
    assert.equal(folder.root, join(base, `session-${id}`));
    assert.equal(((await lstat(folder.root)).mode & 0o777).toString(8), '700');
    assert.equal(folder.nativeId, undefined);
    await folder.record('thread-1');
    await writeFile(join(folder.home, 'conversation'), 'x');
    const again = await openSessionFolder(options, id, 60_000, new Set());
    assert.equal(again.nativeId, 'thread-1');
    assert.ok(await exists(join(again.home, 'conversation')));
    await again.reset();
    assert.equal(again.nativeId, undefined);
    assert.equal(await exists(join(again.home, 'conversation')), false);
    assert.equal((await openSessionFolder(options, id, 60_000, new Set())).nativeId, undefined);
    await removeSessionFolder(options, id);
    assert.equal(await exists(folder.root), false);
  });

  test('a session id that is not a UUID is refused (it names a folder)', async () => {
    await assert.rejects(openSessionFolder(options, '../escape', 60_000, new Set()), (error) => error instanceof DriverError && error.code === 'INVALID_REQUEST');
    await assert.rejects(removeSessionFolder(options, '../../x'), DriverError);
  });

  test('refused under a base anyone may write to', async () => {
    const scratch = await scratchDirectory('session-open');
    try {
      const open = join(scratch.path, 'open');
      await mkdir(open);
      await chmod(open, 0o777);
      await assert.rejects(openSessionFolder({ product: 'test', bases: [join(open, 'base')] }, randomUUID(), 60_000, new Set()), (error) => error instanceof DriverError && error.code === 'CLI_UNAVAILABLE');
    } finally {
      await scratch.remove();
    }
  });

  test('the sweep removes folders idle past retention and grace, never fresh or active ones', async () => {
    const [stale, fresh, active, unrelated] = [randomUUID(), randomUUID(), randomUUID(), 'run-1-keep'];
    for (const id of [stale, fresh, active]) await openSessionFolder(options, id, 1_000, new Set());
    await mkdir(join(base, unrelated));
    const hour = 3_600_000;
    resetSessionSweepClock();
    await sweepSessionFolders(base, new Set([active]), Date.now() + hour);
    // Every folder here is an hour past its 1 s retention and 10 min grace but the active one.
    assert.deepEqual((await readdir(base)).sort(), [`session-${active}`, unrelated].sort());
    await openSessionFolder(options, fresh, hour, new Set());
    resetSessionSweepClock();
    await sweepSessionFolders(base, new Set(), Date.now() + 60_000);
    assert.ok(await exists(join(base, `session-${fresh}`)), 'a folder within its retention stays');
    resetSessionSweepClock();
  });
});
