import { fail } from '../../errors/problem.ts';
import type { RuntimeStatus } from '../../schemas/runtime.ts';
import type { Store } from '../../store/repos/index.ts';
import type { VersionRuntimeRow } from '../../store/repos/runtime/version-runtimes.ts';
import type { Principal } from '../auth/principal.ts';
import type { SpaceService } from '../spaces/service.ts';

export function presentRuntime(row: VersionRuntimeRow): RuntimeStatus {
  return {
    kind: 'functions',
    spaceId: row.space_id,
    versionId: row.version_id,
    entry: row.entry,
    entryKind: row.entry_kind as RuntimeStatus['entryKind'],
    digest: row.bundle_sha256,
    size: row.bundle_size,
    compatibilityDate: row.compatibility_date,
    capabilities: JSON.parse(row.capabilities) as RuntimeStatus['capabilities'],
    routes: JSON.parse(row.routes) as string[],
    createdAt: row.created_at,
  };
}

/** The live version's runtime; `runtime_not_provisioned` for a static space (or none live). */
export async function liveRuntime(
  deps: { spaces: SpaceService; store: Store },
  p: Principal,
  spaceRef: string,
): Promise<RuntimeStatus> {
  const space = await deps.spaces.resolve(p, spaceRef);
  const live = await deps.store.repos.channels.pointer(space.id, 'live');
  const row = live ? await deps.store.repos.versionRuntimes.get(space.id, live) : null;
  if (!row) {
    fail(
      'runtime_not_provisioned',
      live
        ? 'The live version runs no code (no `runtime.kind: "functions"`).'
        : 'The space has no live version.',
      { details: { liveVersionId: live } },
    );
  }
  return presentRuntime(row);
}
