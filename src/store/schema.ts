import type { FoundationTables } from './tables/foundation.ts';
import type { OAuthTables } from './tables/oauth.ts';

/** The Kysely database type: every area's tables. */
export interface DB extends FoundationTables, OAuthTables {}
