import type { Kysely } from 'kysely';

/**
 * `space_thumbnails`: the picture of a space's live front page (issue 23), one row per space, kept by
 * the thumbnails job after a version becomes live. `sha256` names the image in the blob store (the
 * blob sweep keeps what a row names); null with `last_error` set when rendering failed or was off.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('space_thumbnails')
    .addColumn('space_id', 'text', (c) => c.primaryKey().references('spaces.id').onDelete('cascade'))
    .addColumn('version_id', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text')
    .addColumn('size', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('rendered_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('space_thumbnails_sha256').on('space_thumbnails').column('sha256').execute();
}
