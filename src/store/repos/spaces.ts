import type { RepoContext } from './index.ts';
import { SpaceHostnameRepository } from './spaces/hostnames.ts';
import { SpaceKeyRepository } from './spaces/keys.ts';
import { OperationRepository } from './spaces/operations.ts';
import { SpaceRepository } from './spaces/spaces.ts';
import { TagReleaseRepository } from './spaces/tag-releases.ts';
import { TagVersionRepository } from './spaces/tag-versions.ts';
import { SpaceThumbnailRepository } from './spaces/thumbnails.ts';
import { VariableRepository } from './spaces/variables.ts';

/** The spaces group's repositories (see index.ts): spaces, hostnames, operations, keys, tags, variables, thumbnails. */
export interface SpaceRepos {
  spaces: SpaceRepository;
  spaceHostnames: SpaceHostnameRepository;
  operations: OperationRepository;
  spaceKeys: SpaceKeyRepository;
  tagVersions: TagVersionRepository;
  tagReleases: TagReleaseRepository;
  variables: VariableRepository;
  spaceThumbnails: SpaceThumbnailRepository;
}

export function spacesRepos(ctx: RepoContext): SpaceRepos {
  return {
    spaces: new SpaceRepository(ctx),
    spaceHostnames: new SpaceHostnameRepository(ctx),
    operations: new OperationRepository(ctx),
    spaceKeys: new SpaceKeyRepository(ctx),
    tagVersions: new TagVersionRepository(ctx),
    tagReleases: new TagReleaseRepository(ctx),
    variables: new VariableRepository(ctx),
    spaceThumbnails: new SpaceThumbnailRepository(ctx),
  };
}
