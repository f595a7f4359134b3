/** The store engines every store test runs on, and a fresh store of each for one host. */
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { StateStore } from '../../src/store/store.js';
import { tempDir } from './temp.js';

export const ENGINES = ['sqlite'] as const;
export type Engine = (typeof ENGINES)[number];

export async function openTestStore(engine: Engine): Promise<StateStore> {
  switch (engine) {
    case 'sqlite':
      return openSqliteStore(tempDir('agenticdriver-store-'));
  }
}
