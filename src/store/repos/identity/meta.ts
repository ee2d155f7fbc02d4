import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import { isUniqueViolation } from '../../db.ts';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type MetaRow = Selectable<DB['meta']>;

/** Server-wide key/value settings: the main tenant's id, server secrets, the secret key's fingerprint. */
export class MetaRepository {
  constructor(private readonly ctx: RepoContext) {}

  async get(key: string): Promise<string | null> {
    const row = await this.ctx.exec
      .selectFrom('meta')
      .select('value')
      .where('key', '=', key)
      .executeTakeFirst();
    return row?.value ?? null;
  }

  /** Adds a key; throws a unique violation when it exists (the caller decides who won). */
  async insert(key: string, value: string): Promise<void> {
    await this.ctx.exec.insertInto('meta').values({ key, value }).execute();
  }

  /**
   * The value stored under `key`, storing `value` there first when nothing is: the first writer
   * wins, and every later caller (another instance, a later start) gets the first value.
   */
  async valueOrSet(key: string, value: string): Promise<string> {
    const existing = await this.get(key);
    if (existing !== null) return existing;
    try {
      await this.insert(key, value);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const row = await this.get(key);
    if (row === null) throw new Error(`meta: ${key} vanished after it was set`);
    return row;
  }

  /**
   * A server secret kept in the database, so every instance of a scaled-out deployment shares it.
   * Created on first use; concurrent first uses agree on one value.
   */
  async secret(name: string, bytes = 32): Promise<Buffer> {
    const key = `secret:${name}`;
    const existing = await this.get(key);
    if (existing !== null) return Buffer.from(existing, 'base64');
    return Buffer.from(await this.valueOrSet(key, randomBytes(bytes).toString('base64')), 'base64');
  }
}
