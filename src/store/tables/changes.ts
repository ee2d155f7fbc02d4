import type { Generated } from 'kysely';

/** The cross-instance change log (see migrations/0012_changes.ts). */
export interface ChangeTables {
  changes: {
    seq: Generated<number>;
    /** What changed: `space` (subject = space id), `team-tags` (subject = team id). */
    kind: string;
    subject: string;
    /** The instance that wrote it (it has invalidated its own caches already). */
    origin: string;
    created_at: string;
  };
}
