import type { SpaceRow } from '../../store/repos/spaces/spaces.ts';
import type { Principal } from '../auth/principal.ts';
import { actorFromPrincipal, type EventInput, SYSTEM_ACTOR, tenantOfSpace } from '../events/log.ts';

/**
 * The events of a space's lifecycle, as `EventLog.record` takes them (the service records each in
 * the transaction of its change). A space's tenant is its team, or itself while anonymous.
 */
type Space = Pick<SpaceRow, 'id' | 'team_id' | 'slug'>;

const of = (space: Space, rest: Omit<EventInput, 'tenantId' | 'spaceId'>): EventInput => ({
  tenantId: tenantOfSpace(space),
  spaceId: space.id,
  ...rest,
});

export const spaceEvents = {
  created: (row: SpaceRow, p: Principal) =>
    of(row, {
      actor: row.anonymous ? { type: 'anonymous', id: null } : actorFromPrincipal(p),
      code: 'space.created',
      message: `Space ${row.slug} was created.`,
      details: { slug: row.slug, title: row.title, anonymous: row.anonymous === 1, teamId: row.team_id },
    }),
  configUpdated: (space: SpaceRow, p: Principal, set: Partial<SpaceRow>): EventInput | null => {
    const fields = (
      [
        ['title', set.title !== undefined && set.title !== space.title],
        ['config', set.config !== undefined && set.config !== space.config],
        ['noindex', set.noindex !== undefined && set.noindex !== space.noindex],
        ['access', set.access !== undefined && set.access !== space.access],
      ] as const
    )
      .filter(([, c]) => c)
      .map(([f]) => f);
    if (fields.length === 0) return null;
    return of(space, {
      actor: actorFromPrincipal(p),
      code: 'space.config_updated',
      message: `Settings of ${space.slug} changed (${fields.join(', ')}).`,
      details: { fields, settingsDigest: set.settings_digest, previousSettingsDigest: space.settings_digest },
    });
  },
  slugUpdated: (space: Space, p: Principal, slug: string) =>
    of(space, {
      actor: actorFromPrincipal(p),
      code: 'space.slug_updated',
      message: `Space ${space.slug} was renamed to ${slug}.`,
      details: { from: space.slug, to: slug },
    }),
  deleted: (space: Space, p: Principal) =>
    of(space, {
      actor: actorFromPrincipal(p),
      code: 'space.deleted',
      message: `Space ${space.slug} was deleted (restorable until the purge).`,
      details: { slug: space.slug },
    }),
  discarded: (space: Space) =>
    of(space, {
      actor: SYSTEM_ACTOR,
      code: 'space.deleted',
      message: `Space ${space.slug} was removed: its first publish failed.`,
      details: { slug: space.slug, reason: 'first_publish_failed' },
    }),
};
