import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { ApiError } from '../../errors/problem.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { Store } from '../../store/repos/index.ts';
import { openLinkUrl } from '../anonymous/open-link.ts';
import type { AnonymousService } from '../anonymous/service.ts';
import type { Principal } from '../auth/principal.ts';
import type { SpaceRow, SpaceService } from '../spaces/service.ts';
import { FileIntake } from './ingest.ts';
import type { DeclaredFile, PublishResult } from './model.ts';
import type { PublishingService } from './service.ts';
import { type FileSource, type PublishCaps, type PublishTarget, readSource } from './sources.ts';
import type { Spool } from './spool.ts';

/** A first request still `running` after this long is presumed dead (server crash) and retried. */
const STALE_RUNNING_MS = 15 * 60_000;

/** How an anonymous publisher comes back to claim the space made for it. */
export interface ClaimInfo {
  key: string;
  claimUrl: string;
  openUrl: string;
  expiresAt: string;
}

/** What a publish did: the receipt's facts, whether it made the space, and a new anonymous space's claim. */
export interface PublishOutcome extends PublishResult {
  created: boolean;
  claim: ClaimInfo | null;
}

/** The answer a publish is presented as; with an `Idempotency-Key`, what a retry gets again. */
export interface PublishAnswer {
  status: number;
  body: unknown;
}

export interface PublishOptions {
  /** The client's address: anonymous spaces and their quotas count by it, and key-less retries are scoped to it. */
  clientIp: string | null;
  /** Makes retries safe: the same key and source replay the first answer. */
  idempotencyKey?: string;
  /**
   * The channel the new version moves, instead of its target's (`live` for production, `preview`):
   * a branch build's `br-<slug>`.
   */
  channel?: string;
  /** Presents the outcome (the route's receipt); stored for replays when a key is given. */
  present: (outcome: PublishOutcome) => Promise<PublishAnswer>;
}

export interface PublisherDeps {
  store: Store;
  clock: Clock;
  config: Config;
  spaces: SpaceService;
  anonymous: AnonymousService;
  publishing: PublishingService;
  spool: Spool;
  log?: Logger;
}

/** A principal for the anonymous space just created (acts like its space key). */
function spacePrincipal(tenantId: string, spaceId: string): Principal {
  return {
    kind: 'space_key',
    credentialId: `anonymous:${spaceId}`,
    tenantId,
    userId: null,
    teamIds: [],
    scopes: new Set(['spaces:read', 'publish:write', 'spaces:publish']),
    spaceId,
  };
}

/** Whom a credential-free publish's retries belong to: its client address. */
function addressScope(ip: string | null): Principal {
  return {
    kind: 'space_key',
    credentialId: `ip:${ip ?? 'unknown'}`,
    tenantId: 'anonymous',
    userId: null,
    teamIds: [],
    scopes: new Set(),
    spaceId: null,
  };
}

/**
 * The one entry for "publish these files": reads a `FileSource` into the blob store under the
 * publisher's caps, then makes and finalizes a version of a named or a new space (an anonymous,
 * claimable one when there is no principal). Used by `POST /v1/publish`, and by anything in-process
 * that has files to publish (builds, `git push`).
 */
export class Publisher {
  private readonly general: PublishCaps;
  private readonly small: PublishCaps;

  constructor(private readonly d: PublisherDeps) {
    const { limits, anonymous } = d.config;
    this.general = {
      maxFiles: limits.maxFilesPerVersion,
      maxFileBytes: limits.maxFileBytes,
      maxVersionBytes: limits.maxVersionBytes,
    };
    this.small = {
      maxFiles: Math.min(limits.maxFilesPerVersion, anonymous.maxFilesPerVersion),
      maxFileBytes: Math.min(limits.maxFileBytes, anonymous.maxFileBytes),
      maxVersionBytes: Math.min(limits.maxVersionBytes, anonymous.maxVersionBytes),
    };
  }

  /** The caps a publisher's files are read under: anonymous and space-key publishers get the smaller ones. */
  capsFor(anonymous: boolean): PublishCaps {
    return anonymous ? this.small : this.general;
  }

  /**
   * Publishes a source's files for `p` (null: anonymously) to the space `target` names (or the one
   * the source's payload names, or the credential's own, or a new one). The files are durable and
   * recorded before anything else happens; a refused publish records nothing and leaves no space.
   */
  async publishFiles(
    p: Principal | null,
    target: PublishTarget,
    source: FileSource,
    options: PublishOptions,
  ): Promise<{ answer: PublishAnswer; replayed: boolean }> {
    const anonymous = p === null || p.kind === 'space_key';
    const read = await this.read(source, this.capsFor(anonymous));
    if (anonymous) this.checkAnonymousLimits(read.files);
    const input = { ...read.target, ...target };
    const scope = p ?? addressScope(options.clientIp);
    return this.idempotent(scope, options.idempotencyKey, read.digest, async () => {
      let claim: { key: string; expiresAt: string } | null = null;
      const createAnonymous = async () => {
        const made = await this.d.anonymous.createSpace(options.clientIp, { title: input.title });
        claim = { key: made.key, expiresAt: made.space.claim_expires_at! };
        return { space: made.space, principal: spacePrincipal(made.space.tenant_id, made.space.id) };
      };
      const { result, principal } = await this.publish(
        p ?? scope,
        input,
        source.type,
        read.files,
        p === null ? createAnonymous : undefined,
        options.channel,
      );
      if (principal.kind === 'space_key' && !result.noop) await this.d.anonymous.touch(result.space.id);
      return options.present({ ...result, claim: claim ? await this.claimInfo(result.space, claim) : null });
    });
  }

  /** Reads a source into the blob store: all of its files durable and recorded, or none recorded. */
  private async read(source: FileSource, caps: PublishCaps) {
    const intake = new FileIntake(
      { blobs: this.d.publishing.index.blobs, store: this.d.store, clock: this.d.clock, spool: this.d.spool },
      caps.maxFileBytes,
    );
    try {
      const read = await readSource(source, caps, intake, this.d.spool);
      await intake.commit();
      return read;
    } catch (err) {
      await intake.abort().catch(() => {});
      throw err;
    }
  }

  /** Unclaimed spaces take smaller versions (SPACES_ANON_*); a breach stores nothing new. */
  private checkAnonymousLimits(files: DeclaredFile[]): void {
    const lim = this.d.config.anonymous;
    if (files.length > lim.maxFilesPerVersion) {
      throw new ApiError(
        'version_file_count_exceeded',
        `Anonymous versions hold at most ${lim.maxFilesPerVersion} files.`,
        {
          details: { limit: lim.maxFilesPerVersion, files: files.length },
          suggestions: ['Sign in (`spaces login`) for larger versions.'],
        },
      );
    }
    let total = 0;
    for (const f of files) {
      total += f.size;
      if (f.size > lim.maxFileBytes) {
        throw new ApiError(
          'version_file_too_large',
          `${f.path} is larger than ${lim.maxFileBytes} bytes, the anonymous limit.`,
          {
            details: { limit: lim.maxFileBytes, path: f.path, size: f.size },
          },
        );
      }
    }
    if (total > lim.maxVersionBytes) {
      throw new ApiError(
        'version_total_bytes_exceeded',
        `Anonymous versions hold at most ${lim.maxVersionBytes} bytes.`,
        {
          details: { limit: lim.maxVersionBytes, bytes: total },
        },
      );
    }
  }

  /** A new anonymous space's claim, with its expiry as the publish left it (a publish extends it). */
  private async claimInfo(space: SpaceRow, claim: { key: string; expiresAt: string }): Promise<ClaimInfo> {
    const fresh = await this.d.store.repos.spaces.byId(space.id);
    return {
      key: claim.key,
      claimUrl: this.d.anonymous.claimUrl(claim.key),
      openUrl: openLinkUrl(this.d.spaces.liveUrlOf(space), claim.key),
      expiresAt: fresh?.claim_expires_at ?? claim.expiresAt,
    };
  }

  /**
   * Publishes stored `files` to the space named in `input` (or the credential's own), or to a new
   * space: `create` makes it (an anonymous space, with the principal to publish as); without it a new
   * space is made for `p`. A new space whose first publish fails is removed again, so a refused
   * publish leaves nothing behind and uses no quota.
   */
  private async publish(
    p: Principal,
    input: PublishTarget,
    sourceType: string,
    files: DeclaredFile[],
    create?: () => Promise<{ space: SpaceRow; principal: Principal }>,
    channel?: string,
  ): Promise<{ result: PublishResult & { created: boolean }; principal: Principal }> {
    // Check the snapshot before a space is created for it.
    const checked = this.d.publishing.checkManifest(files, 'publish');
    let space: SpaceRow;
    const ref = input.spaceId ?? input.slug ?? p.spaceId ?? null;
    if (create) ({ space, principal: p } = await create());
    else if (ref) space = await this.d.spaces.resolve(p, ref);
    else
      space = await this.d.spaces.create(p, {
        teamId: input.teamId,
        title: input.title,
        access: input.access,
      });
    const created = create !== undefined || !ref;
    try {
      const r = await this.d.publishing.createVersion(
        p,
        space,
        {
          files: checked,
          target: input.target,
          message: input.message ?? null,
          source: { type: sourceType },
        },
        'publish',
        checked,
      );
      if (r.noop) return { result: { ...r, created }, principal: p };
      return {
        result: { ...(await this.d.publishing.finalize(p, space, r.version.id, channel)), created },
        principal: p,
      };
    } catch (err) {
      if (created) {
        await this.d.spaces.discardUnpublished(space.id).catch((cause) => {
          this.d.log?.error(
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
  private async idempotent(
    p: Principal,
    key: string | undefined,
    bodyHash: string,
    fn: () => Promise<PublishAnswer>,
  ): Promise<{ answer: PublishAnswer; replayed: boolean }> {
    if (key === undefined) return { answer: await fn(), replayed: false };
    if (key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
      throw new ApiError(
        'invalid_idempotency_key',
        'An Idempotency-Key is 1..255 visible ASCII characters.',
        {
          details: { in: 'header', header: 'Idempotency-Key' },
        },
      );
    }
    const keys = this.d.store.repos.idempotencyKeys;
    const scope = createHash('sha256').update(`${p.tenantId}\0${p.credentialId}\0${key}`).digest('hex');
    for (let attempt = 0; ; attempt++) {
      try {
        await keys.insertRunning(scope, bodyHash, this.d.clock.now().toISOString());
        break;
      } catch (err) {
        if (!isUniqueViolation(err) || attempt > 3) throw err;
      }
      const row = await keys.byScope(scope);
      if (!row) continue;
      if (row.body_hash !== bodyHash) {
        throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with a different body.', {
          details: { in: 'header', header: 'Idempotency-Key' },
        });
      }
      if (row.state === 'done') {
        return {
          answer: { status: row.status_code ?? 200, body: JSON.parse(row.response ?? 'null') },
          replayed: true,
        };
      }
      if (this.d.clock.now().getTime() - Date.parse(row.created_at) > STALE_RUNNING_MS) {
        await keys.delete(scope, true);
        continue;
      }
      throw new ApiError(
        'idempotency_conflict_in_progress',
        'The first request with this key is still running.',
        {
          facts: { retryAfterSeconds: 2 },
        },
      );
    }
    try {
      const answer = await fn();
      await keys.complete(scope, answer.status, JSON.stringify(answer.body));
      return { answer, replayed: false };
    } catch (err) {
      // A refused or failed publish stored nothing: the same key may try again.
      await keys.delete(scope);
      throw err;
    }
  }
}
