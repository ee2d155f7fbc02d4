import type { FoundationTables } from './tables/foundation.ts';
import type { JobsTables } from './tables/jobs.ts';

/** The Kysely database type: every area's tables. */
export interface DB extends FoundationTables, JobsTables {}
