import type { Kysely } from 'kysely';
import type { DB } from './schema.ts';

/**
 * Removes every row of a space that never published: made by a first publish that was then refused,
 * it must leave nothing behind (no space, no version, no hostname, no anonymous key counting against
 * the address's quota). In one transaction, and only while no channel points at any of its versions
 * and none is ready — so a space something did publish to meanwhile is kept. True when it went.
 * Blobs are shared by content and left to the blob sweep.
 */
export async function deleteUnpublishedSpace(db: Kysely<DB>, spaceId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const ready = await trx
      .selectFrom('versions')
      .select('id')
      .where('space_id', '=', spaceId)
      .where('status', '=', 'ready')
      .executeTakeFirst();
    const channel = await trx
      .selectFrom('channels')
      .select('name')
      .where('space_id', '=', spaceId)
      .executeTakeFirst();
    if (ready || channel) return false;
    const versions = trx.selectFrom('versions').select('id').where('space_id', '=', spaceId);
    await trx.deleteFrom('version_files').where('version_id', 'in', versions).execute();
    await trx.deleteFrom('versions').where('space_id', '=', spaceId).execute();
    await trx.deleteFrom('channel_history').where('space_id', '=', spaceId).execute();
    await trx.deleteFrom('operations').where('space_id', '=', spaceId).execute();
    await trx.deleteFrom('variables').where('space_id', '=', spaceId).execute();
    await trx.deleteFrom('space_keys').where('space_id', '=', spaceId).execute();
    await trx.deleteFrom('space_hostnames').where('space_id', '=', spaceId).execute();
    const r = await trx.deleteFrom('spaces').where('id', '=', spaceId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  });
}
