import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.ts';
import * as m0004 from './0004_oauth.ts';

/** Ordered migrations; names sort in the order they run. Each area appends its own file here. */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0004_oauth': m0004,
};
