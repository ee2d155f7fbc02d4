import type { Clock } from '../../clock.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import type { Repositories, Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import { actorFromPrincipal, tenantOfSpace } from '../events/log.ts';
import type { DomainEvents } from '../events.ts';
import type { SpaceRow } from '../spaces/service.ts';
import { actorOf, type VersionRow } from './model.ts';
import type { VersionService } from './versions.ts';

const CHANNEL_NAME = /^[a-z0-9-]{1,32}$/;

/** Why a pointer moved, as channel history records it. */
export type MoveReason = 'publish' | 'promote';

/**
 * Channels: a space's named pointers to versions. This is the only code that moves a pointer
 * (finalize's publish, promote, rollback), so it is where everything that must follow a move is
 * told: the edge's caches (and other instances) through `DomainEvents` now, an event outbox later.
 */
export class ChannelService {
  /** Told after every committed move (e.g. the thumbnails job); must not throw or wait. */
  readonly onMoved: Array<(spaceId: string) => void> = [];
  /**
   * Run inside the move's transaction when `live` moves (e.g. scheduling the new live version's
   * crons): what they write commits or rolls back with the pointer.
   */
  readonly onLive: Array<(repos: Repositories, spaceId: string, versionId: string) => Promise<void>> = [];

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly versions: VersionService,
    private readonly events?: DomainEvents,
  ) {}

  static checkName(name: string): void {
    if (/^v\d+$/.test(name) || name.startsWith('ver-') || name.startsWith('ver_')) {
      fail('channel_name_reserved', `"${name}" is reserved for version addresses.`, { pointer: '/channel' });
    }
    if (!CHANNEL_NAME.test(name)) {
      fail('channel_unsupported', 'Channel names are 1..32 lowercase letters, digits and dashes.', {
        pointer: '/channel',
      });
    }
  }

  /**
   * One pointer update and one history row inside the caller's transaction; returns the version
   * the channel pointed at before. The caller calls `moved` once its transaction committed.
   */
  async move(
    repos: Repositories,
    spaceId: string,
    channel: string,
    versionId: string,
    p: Principal,
    reason: MoveReason,
  ): Promise<string | null> {
    const previous = await repos.channels.pointer(spaceId, channel);
    const at = this.clock.now();
    const space = this.events ? await repos.spaces.byId(spaceId) : null;
    await repos.channels.move({
      id: newId('chh', at.getTime()),
      spaceId,
      channel,
      versionId,
      previousVersionId: previous,
      actor: actorOf(p),
      reason,
      at: at.toISOString(),
    });
    if (channel === 'live') for (const hook of this.onLive) await hook(repos, spaceId, versionId);
    if (this.events && space) {
      // Version ids sort by creation: pointing a channel at an older version than before is a rollback.
      const rollback = reason === 'promote' && previous !== null && versionId < previous;
      await this.events.log.record(repos, {
        tenantId: tenantOfSpace(space),
        spaceId,
        actor: actorFromPrincipal(p),
        code: 'channel.promoted',
        message: rollback
          ? `Channel ${channel} of ${space.slug} was rolled back to ${versionId}.`
          : `Channel ${channel} of ${space.slug} now points at ${versionId}.`,
        details: {
          channel,
          versionId,
          previousVersionId: previous,
          reason: rollback ? 'rollback' : reason,
          rollback,
        },
      });
    }
    return previous;
  }

  /** Tells whoever caches a space's pointers that they moved (after the move committed). */
  moved(spaceId: string): void {
    this.events?.spaceChanged(spaceId);
    for (const listener of this.onMoved) listener(spaceId);
  }

  /** Moves a channel to a ready version: publish-to-preview, promote and rollback alike. */
  async promote(
    p: Principal,
    space: SpaceRow,
    ref: string,
    channel: string,
    expectedVersionId: string | null | undefined,
  ): Promise<{ version: VersionRow; channel: string; previousVersionId: string | null; updatedAt: string }> {
    ChannelService.checkName(channel);
    const v = await this.versions.resolve(space, ref);
    if (v.status !== 'ready') {
      throw new ApiError(
        'version_not_ready',
        `The version is ${v.status}; only a ready version can be promoted.`,
        {
          details: { status: v.status },
        },
      );
    }
    const previous = await this.store.transaction(async (repos) => {
      const current = await repos.channels.pointer(space.id, channel);
      if (expectedVersionId !== undefined && expectedVersionId !== current) {
        throw new ApiError(
          'channel_pointer_moved',
          `The channel ${channel} points at ${current ?? 'nothing'} now.`,
          {
            details: { channel, currentVersionId: current, expectedVersionId },
          },
        );
      }
      if (current === v.id) {
        throw new ApiError('version_already_live', `The channel ${channel} already points at ${v.id}.`, {
          details: { channel, versionId: v.id },
        });
      }
      return this.move(repos, space.id, channel, v.id, p, 'promote');
    });
    this.moved(space.id);
    return { version: v, channel, previousVersionId: previous, updatedAt: this.clock.now().toISOString() };
  }

  /**
   * Retires a channel (a deleted branch's `br-<slug>`): its pointer is removed, so its host stops
   * serving, and the edge is told. `live` is never retired. True when the channel existed.
   */
  async retire(spaceId: string, channel: string): Promise<boolean> {
    if (channel === 'live')
      fail('channel_not_retirable', 'The live channel can’t be retired.', { pointer: '/channel' });
    const removed = await this.store.repos.channels.delete(spaceId, channel);
    if (removed) this.moved(spaceId);
    return removed;
  }

  list(spaceId: string) {
    return this.store.repos.channels.list(spaceId);
  }

  history(spaceId: string, channel: string, after: string | null, n: number) {
    return this.store.repos.channels.history(spaceId, channel, after, n);
  }

  /** Channel names pointing at each of these versions. */
  async of(versionIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const r of await this.store.repos.channels.pointingAt(versionIds)) {
      out.set(r.version_id, [...(out.get(r.version_id) ?? []), r.name]);
    }
    return out;
  }
}
