import {
  insertVersionFiles,
  type LayeredVersion,
  updateVersionFiles,
  type VersionFileRow,
  versionFilesQuery,
} from '../../version-files.ts';
import type { RepoContext } from '../index.ts';

export type { LayeredVersion, VersionFileRow };

/** A declared file of a version with what the blob index holds of its bytes. */
export type VersionFileWithBlob = VersionFileRow & {
  stored_sha256: string | null;
  stored_variants: string | null;
};

/** A version file that can be referenced by the blob sweep: served bytes, declared bytes, variants. */
export interface ReferencingRow {
  sha256: string;
  source_sha256: string;
  encodings: string | null;
}

/**
 * Version files: one row per path of a version (a layered version: per added, changed or removed
 * path; the rest is inherited from its base). Bulk writes take the SQLite connection's prepared
 * statements inside a transaction, batched multi-row INSERTs elsewhere (see store/version-files.ts).
 */
export class VersionFileRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** The SQLite handle for bulk writes: only inside a transaction, which holds its connection. */
  private get sqlite() {
    return this.ctx.inTransaction ? this.ctx.database.sqlite : undefined;
  }

  private get trx() {
    if (!this.ctx.inTransaction) throw new Error('version files are written inside store.transaction');
    return this.ctx.exec as Parameters<typeof insertVersionFiles>[0];
  }

  /** Inserts rows (inside a transaction). */
  async insert(rows: VersionFileRow[]): Promise<void> {
    await insertVersionFiles(this.trx, rows, this.sqlite);
  }

  /** Rewrites the served bytes, content type and encodings of existing rows (inside a transaction). */
  async update(rows: VersionFileRow[]): Promise<void> {
    await updateVersionFiles(this.trx, rows, this.sqlite);
  }

  /** Replaces every row of a version with `rows` (inside a transaction). */
  async replace(versionId: string, rows: VersionFileRow[]): Promise<void> {
    await this.deleteForVersion(versionId);
    await this.insert(rows);
  }

  /**
   * Writes the rows of a version that changed since they were inserted; `all` is every row the
   * version holds. SQLite updates each changed row with a prepared statement; PostgreSQL, where each
   * UPDATE is a network round trip, rewrites many (over 200) in bulk: delete, then batched insert.
   */
  async updateChanged(versionId: string, all: VersionFileRow[], changed: VersionFileRow[]): Promise<void> {
    if (!this.sqlite && changed.length > 200) await this.replace(versionId, all);
    else await this.update(changed);
  }

  async deleteForVersion(versionId: string): Promise<void> {
    await this.ctx.exec.deleteFrom('version_files').where('version_id', '=', versionId).execute();
  }

  /** A version's own rows (a layer's: only what it adds, changes or removes), in no order. */
  own(versionId: string): Promise<VersionFileRow[]> {
    return this.ctx.exec
      .selectFrom('version_files')
      .selectAll()
      .where('version_id', '=', versionId)
      .execute();
  }

  /** A version's own rows joined with the blob index (absent bytes: `stored_sha256` null). */
  ownWithBlobs(versionId: string): Promise<VersionFileWithBlob[]> {
    return this.ctx.exec
      .selectFrom('version_files as vf')
      .leftJoin('blobs as b', 'b.sha256', 'vf.source_sha256')
      .selectAll('vf')
      .select(['b.sha256 as stored_sha256', 'b.variants as stored_variants'])
      .where('vf.version_id', '=', versionId)
      .execute();
  }

  /** Declared (not removed) rows of a version whose bytes the blob index does not hold. */
  withoutBlobs(
    versionId: string,
  ): Promise<Array<Pick<VersionFileRow, 'path' | 'source_sha256' | 'source_size'>>> {
    return this.ctx.exec
      .selectFrom('version_files as vf')
      .leftJoin('blobs as b', 'b.sha256', 'vf.source_sha256')
      .select(['vf.path', 'vf.source_sha256', 'vf.source_size'])
      .where('vf.version_id', '=', versionId)
      .where('vf.removed', '=', 0)
      .where('b.sha256', 'is', null)
      .execute();
  }

  /** The declared bytes of one of a version's own paths (not removed). */
  async declared(
    versionId: string,
    path: string,
  ): Promise<Pick<VersionFileRow, 'source_sha256' | 'source_size'> | null> {
    return (
      (await this.ctx.exec
        .selectFrom('version_files')
        .select(['source_sha256', 'source_size'])
        .where('version_id', '=', versionId)
        .where('path', '=', path)
        .where('removed', '=', 0)
        .executeTakeFirst()) ?? null
    );
  }

  /** One file of a version, inherited rows included. */
  async at(version: LayeredVersion, path: string): Promise<VersionFileRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom(versionFilesQuery(this.ctx.exec, version).as('f'))
        .selectAll()
        .where('path', '=', path)
        .executeTakeFirst()) ?? null
    );
  }

  /** Every file of a version, inherited rows included (they keep the base's `version_id`), in no order. */
  all(version: LayeredVersion): Promise<VersionFileRow[]> {
    return versionFilesQuery(this.ctx.exec, version).execute();
  }

  /** A page of a version's files by path (inherited rows included). */
  page(version: LayeredVersion, after: string | null, limit: number): Promise<VersionFileRow[]> {
    let q = this.ctx.exec.selectFrom(versionFilesQuery(this.ctx.exec, version).as('f')).selectAll();
    if (after !== null) q = q.where('path', '>', after);
    return q.orderBy('path').limit(limit).execute();
  }

  /**
   * Every file row a ready or uploading version relies on: their own rows, and the rows of a deleted
   * or expired base that such a layer inherits (neither overrides nor removes).
   */
  async referencing(): Promise<ReferencingRow[]> {
    const own = await this.ctx.exec
      .selectFrom('version_files')
      .innerJoin('versions', 'versions.id', 'version_files.version_id')
      .select(['version_files.sha256', 'version_files.source_sha256', 'version_files.encodings'])
      .where('versions.status', 'in', ['ready', 'uploading'])
      .where('version_files.removed', '=', 0)
      .execute();
    const inherited = await this.ctx.exec
      .selectFrom('version_files as b')
      .innerJoin('versions as layer', 'layer.base_id', 'b.version_id')
      .innerJoin('versions as base', 'base.id', 'b.version_id')
      .select(['b.sha256', 'b.source_sha256', 'b.encodings'])
      .where('layer.status', 'in', ['ready', 'uploading'])
      .where('base.status', 'not in', ['ready', 'uploading'])
      .where('b.removed', '=', 0)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('version_files as o')
              .select('o.path')
              .whereRef('o.version_id', '=', 'layer.id')
              .whereRef('o.path', '=', 'b.path'),
          ),
        ),
      )
      .execute();
    return [...own, ...inherited];
  }
}
