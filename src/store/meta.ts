import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from './db.ts';
import type { DB } from './schema.ts';

/**
 * A server secret kept in the database, so every instance of a scaled-out deployment shares it.
 * Created on first use; concurrent first uses agree on one value.
 */
export async function serverSecret(db: Kysely<DB>, name: string, bytes = 32): Promise<Buffer> {
  const key = `secret:${name}`;
  const existing = await db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst();
  if (existing) return Buffer.from(existing.value, 'base64');
  try {
    await db
      .insertInto('meta')
      .values({ key, value: randomBytes(bytes).toString('base64') })
      .execute();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  const row = await db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}

/**
 * The value stored under `key` in `meta`, storing `value` there first when nothing is: the first
 * writer wins, and every later caller (another instance, a later start) gets the first value.
 */
export async function metaValueOrSet(db: Kysely<DB>, key: string, value: string): Promise<string> {
  const existing = await db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst();
  if (existing) return existing.value;
  try {
    await db.insertInto('meta').values({ key, value }).execute();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  const row = await db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return row.value;
}
