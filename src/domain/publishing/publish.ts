import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import { ApiError } from '../../errors/problem.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { DB } from '../../store/schema.ts';
import type { Principal } from '../auth/principal.ts';
import type { SpaceRow, SpaceService } from '../spaces/service.ts';
import type { DeclaredFile, PublishingService, PublishResult } from './service.ts';

export interface OneCallInput {
  spaceId?: string;
  slug?: string;
  teamId?: string;
  title?: string;
  target?: 'production' | 'preview';
  message?: string | null;
  access?: 'private' | 'team' | 'public';
}

/** Inline JSON publishes are for small sites. */
export const INLINE_MAX_FILES = 100;
export const INLINE_MAX_BYTES = 1024 * 1024;
/** A first request still `running` after this long is presumed dead (server crash) and retried. */
const STALE_RUNNING_MS = 15 * 60_000;

/**
 * `POST /v1/publish`: files already streamed into the blob store become a version of a named or a
 * new space, finalized in the same request.
 */
export class OneCallPublisher {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly spaces: SpaceService,
    private readonly publishing: PublishingService,
    private readonly log?: Logger,
  ) {}

  /**
   * Publishes `files` to the space named in `input` (or the credential's own), or to a new space:
   * `create` makes it (an anonymous space, with the principal to publish as); without it a new space
   * is made for `p`. A new space whose first publish fails is removed again, so a refused publish
   * leaves nothing behind and uses no quota.
   */
  async publish(
    p: Principal,
    input: OneCallInput,
    files: DeclaredFile[],
    create?: () => Promise<{ space: SpaceRow; principal: Principal }>,
  ): Promise<PublishResult & { created: boolean }> {
    // Check the snapshot before a space is created for it.
    const checked = this.publishing.checkManifest(files, 'publish');
    let space: SpaceRow;
    const ref = input.spaceId ?? input.slug ?? p.spaceId ?? null;
    if (create) ({ space, principal: p } = await create());
    else if (ref) space = await this.spaces.resolve(p, ref);
    else
      space = await this.spaces.create(p, { teamId: input.teamId, title: input.title, access: input.access });
    const created = create !== undefined || !ref;
    try {
      const r = await this.publishing.createVersion(
        p,
        space,
        {
          files: checked,
          target: input.target,
          message: input.message ?? null,
          source: { type: 'direct-upload' },
        },
        'publish',
        checked,
      );
      if (r.noop) return { ...r, created };
      return { ...(await this.publishing.finalize(p, space, r.version.id)), created };
    } catch (err) {
      if (created) {
        await this.spaces.discardUnpublished(space.id).catch((cause) => {
          this.log?.error(
            { err: cause, spaceId: space.id },
            'could not remove the space of a failed first publish',
          );
        });
      }
      throw err;
    }
  }

  /**
   * Runs `fn` at most once per (credential, Idempotency-Key): the same key and body replay the first
   * answer; another body is `idempotency_key_reused`; a first request still running is
   * `idempotency_conflict_in_progress`.
   */
  async idempotent(
    p: Principal,
    key: string | undefined,
    bodyHash: string,
    fn: () => Promise<{ status: number; body: unknown }>,
  ): Promise<{ status: number; body: unknown; replayed: boolean }> {
    if (key === undefined) return { ...(await fn()), replayed: false };
    if (key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
      throw new ApiError(
        'invalid_idempotency_key',
        'An Idempotency-Key is 1..255 visible ASCII characters.',
        {
          details: { in: 'header', header: 'Idempotency-Key' },
        },
      );
    }
    const scope = createHash('sha256').update(`${p.tenantId}\0${p.credentialId}\0${key}`).digest('hex');
    for (let attempt = 0; ; attempt++) {
      try {
        await this.db
          .insertInto('idempotency_keys')
          .values({
            scope_key: scope,
            body_hash: bodyHash,
            state: 'running',
            status_code: null,
            response: null,
            created_at: this.clock.now().toISOString(),
          })
          .execute();
        break;
      } catch (err) {
        if (!isUniqueViolation(err) || attempt > 3) throw err;
      }
      const row = await this.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('scope_key', '=', scope)
        .executeTakeFirst();
      if (!row) continue;
      if (row.body_hash !== bodyHash) {
        throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with a different body.', {
          details: { in: 'header', header: 'Idempotency-Key' },
        });
      }
      if (row.state === 'done')
        return { status: row.status_code ?? 200, body: JSON.parse(row.response ?? 'null'), replayed: true };
      if (this.clock.now().getTime() - Date.parse(row.created_at) > STALE_RUNNING_MS) {
        await this.db
          .deleteFrom('idempotency_keys')
          .where('scope_key', '=', scope)
          .where('state', '=', 'running')
          .execute();
        continue;
      }
      throw new ApiError(
        'idempotency_conflict_in_progress',
        'The first request with this key is still running.',
        { facts: { retryAfterSeconds: 2 } },
      );
    }
    try {
      const result = await fn();
      await this.db
        .updateTable('idempotency_keys')
        .set({ state: 'done', status_code: result.status, response: JSON.stringify(result.body) })
        .where('scope_key', '=', scope)
        .execute();
      return { ...result, replayed: false };
    } catch (err) {
      // A refused or failed publish stored nothing: the same key may try again.
      await this.db.deleteFrom('idempotency_keys').where('scope_key', '=', scope).execute();
      throw err;
    }
  }
}
