import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.ts';
import * as m0003 from './0003_jobs.ts';

/** Ordered migrations; names sort in the order they run. Each area appends its own file here. */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0003_jobs': m0003,
};
