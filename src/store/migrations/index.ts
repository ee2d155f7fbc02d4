import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.ts';
import * as m0002 from './0002_spaces.ts';
import * as m0005 from './0005_publishing.ts';
import * as m0006 from './0006_anonymous.ts';

/** Ordered migrations; names sort in the order they run. Each area appends its own file here. */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_spaces': m0002,
  '0006_anonymous': m0006,
  '0005_publishing': m0005,
};
