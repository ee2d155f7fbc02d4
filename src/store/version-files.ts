import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.ts';

/** What a query needs to know of a version to list its files. */
export interface LayeredVersion {
  id: string;
  base_id: string | null;
}

/**
 * Every file of a version, as rows of `version_files`. A flat version's own rows; a layered version's
 * rows (added and changed files) plus the rows of its base that it neither overrides nor removes.
 * Inherited rows keep the base's `version_id`. Order is not defined: wrap it (`.as('f')`) to sort.
 */
export function versionFilesQuery(db: Kysely<DB> | Transaction<DB>, v: LayeredVersion) {
  const own = db
    .selectFrom('version_files')
    .selectAll()
    .where('version_id', '=', v.id)
    .where('removed', '=', 0);
  if (!v.base_id) return own;
  const baseId = v.base_id;
  return own.unionAll(
    db
      .selectFrom('version_files as b')
      .selectAll('b')
      .where('b.version_id', '=', baseId)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('version_files as o')
              .select('o.path')
              .where('o.version_id', '=', v.id)
              .whereRef('o.path', '=', 'b.path'),
          ),
        ),
      ),
  );
}
