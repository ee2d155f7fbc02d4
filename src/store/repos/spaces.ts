import type { Executor, RepoContext } from './index.ts';
import { SpaceHostnameRepository } from './spaces/hostnames.ts';
import { SpaceKeyRepository } from './spaces/keys.ts';
import { OperationRepository } from './spaces/operations.ts';
import { SpaceRepository } from './spaces/spaces.ts';
import { TagReleaseRepository } from './spaces/tag-releases.ts';
import { TagVersionRepository } from './spaces/tag-versions.ts';
import { VariableRepository } from './spaces/variables.ts';

/** The spaces group's repositories (see index.ts): spaces, hostnames, operations, keys, tags, variables. */
export interface SpaceRepos {
  spaces: SpaceRepository;
  spaceHostnames: SpaceHostnameRepository;
  operations: OperationRepository;
  spaceKeys: SpaceKeyRepository;
  tagVersions: TagVersionRepository;
  tagReleases: TagReleaseRepository;
  variables: VariableRepository;
  /** #19: folds into the identity group's TeamRepository after merge. */
}

/** Executors by the space repository bound to them; see {@link transitionalExecutor}. */
const executors = new WeakMap<SpaceRepository, Executor>();

export function spacesRepos(ctx: RepoContext): SpaceRepos {
  const repos: SpaceRepos = {
    spaces: new SpaceRepository(ctx),
    spaceHostnames: new SpaceHostnameRepository(ctx),
    operations: new OperationRepository(ctx),
    spaceKeys: new SpaceKeyRepository(ctx),
    tagVersions: new TagVersionRepository(ctx),
    tagReleases: new TagReleaseRepository(ctx),
    variables: new VariableRepository(ctx),
  };
  executors.set(repos.spaces, ctx.exec);
  return repos;
}

/**
 * #19 transitional: the executor a set of repositories runs on, for the two callers whose tables
 * have no repository on this branch yet and must write in the same transaction — the purge hook's
 * versions rows (→ the publishing group's versions repository) and the continuation key
 * (→ `repos.apiKeys.create`). Remove it when both are switched.
 */
export function transitionalExecutor(repos: Pick<SpaceRepos, 'spaces'>): Executor {
  const exec = executors.get(repos.spaces);
  if (!exec) throw new Error('transitionalExecutor: not a repository set of the spaces group');
  return exec;
}
