import type { FoundationTables } from './tables/foundation.ts';

/** The Kysely database type: every area's tables. */
export interface DB extends FoundationTables {}
