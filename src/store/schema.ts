import type { AnonymousTables } from './tables/anonymous.ts';
import type { FoundationTables } from './tables/foundation.ts';
import type { PublishingTables } from './tables/publishing.ts';
import type { SpaceTables } from './tables/spaces.ts';

/** The Kysely database type: every area's tables. */
export interface DB extends FoundationTables, SpaceTables, AnonymousTables, PublishingTables {}
