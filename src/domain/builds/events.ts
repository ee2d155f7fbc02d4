import type { BuildRow } from '../../store/repos/builds/builds.ts';
import type { Repositories, Store } from '../../store/repos/index.ts';
import { type Actor, type EventLog, SYSTEM_ACTOR, tenantOfSpace } from '../events/log.ts';
import type { SpaceRow } from '../spaces/service.ts';

/** The states a build ends in; each records `build.<state>`. */
export const FINISHED_STATES: readonly string[] = ['succeeded', 'failed', 'canceled', 'skipped'];

/** Stores a new build and its `build.created` event (one transaction), and `build.<state>` when it is born finished. */
export function insertBuild(
  store: Store,
  eventLog: EventLog | undefined,
  row: BuildRow,
  space: SpaceRow,
  actor: Actor,
): Promise<void> {
  return store.transaction(async (repos) => {
    await repos.builds.create(row);
    await recordBuildCreated(eventLog, repos, row, space, actor);
    // A build made finished (a push auto-deploy turned away) records its end with it.
    if (FINISHED_STATES.includes(row.status))
      await recordBuildFinished(eventLog, repos, row.id, row.status, actor);
  });
}

/** `build.created`, in the transaction that stores the build. */
export async function recordBuildCreated(
  eventLog: EventLog | undefined,
  repos: Repositories,
  row: BuildRow,
  space: SpaceRow,
  actor: Actor,
): Promise<void> {
  await eventLog?.record(repos, {
    tenantId: tenantOfSpace(space),
    spaceId: space.id,
    actor,
    code: 'build.created',
    message: `A build of ${space.slug} was created (${row.source_type}).`,
    details: { buildId: row.id, sourceType: row.source_type, branch: row.branch, retryOf: row.retry_of },
  });
}

/** `build.<status>` for a build that just finished, in the transaction of that transition. */
export async function recordBuildFinished(
  eventLog: EventLog | undefined,
  repos: Repositories,
  id: string,
  status: string,
  actor: Actor,
): Promise<void> {
  if (!eventLog || !FINISHED_STATES.includes(status)) return;
  const build = await repos.builds.byId(id);
  const space = build ? await repos.spaces.byId(build.space_id) : null;
  if (!build || !space) return;
  await eventLog.record(repos, {
    tenantId: tenantOfSpace(space),
    spaceId: space.id,
    actor,
    code: `build.${status}`,
    message:
      status === 'succeeded'
        ? `Build ${id} of ${space.slug} succeeded.`
        : `Build ${id} of ${space.slug} ${status}${build.error_message ? `: ${build.error_message}` : '.'}`,
    details: {
      buildId: id,
      status,
      errorCode: build.error_code,
      versionId: build.version_id,
      channel: build.channel,
    },
  });
}

/** Moves a build from one of `from` to the patch's state; a finished state records its event with it. */
export function transitionBuild(
  store: Store,
  eventLog: EventLog | undefined,
  id: string,
  from: readonly string[] | null,
  patch: Parameters<Repositories['builds']['transition']>[2],
  actor: Actor = SYSTEM_ACTOR,
): Promise<boolean> {
  return store.transaction(async (repos) => {
    if (!(await repos.builds.transition(id, from, patch))) return false;
    if (patch.status) await recordBuildFinished(eventLog, repos, id, patch.status, actor);
    return true;
  });
}
