import type { Kysely } from 'kysely';

/**
 * Layered file lists: a version created from a small change to the live site stores only what differs
 * from a flat base version (`versions.base_id`): added and changed files as rows, removed paths as
 * rows with `removed = 1`. A re-publish of one changed file in a 10,000-file site writes two rows,
 * not 10,001.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('versions').addColumn('base_id', 'text').execute();
  await db.schema
    .alterTable('version_files')
    .addColumn('removed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('versions_base').ifNotExists().on('versions').column('base_id').execute();
}
