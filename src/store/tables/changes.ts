import type { Generated } from 'kysely';

/** What instances share beyond the domain: the change log (0012) and rate-limit windows (0013). */
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
  /** Shared rate-limit counts (see migrations/0013_rate_windows.ts). */
  rate_windows: {
    /** sha256 (hex) of the limiter's name and the client's key. */
    key: string;
    /** The window's number: its start in ms divided by its length. */
    window: number;
    hits: number;
    /** ms since the epoch. */
    expires_at: number;
  };
}
