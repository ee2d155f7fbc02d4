import type { RepoContext } from './index.ts';

/** The spaces group's repositories (see index.ts). */
// biome-ignore lint/complexity/noBannedTypes: filled in as the group's repositories are added
export type SpaceRepos = {};

export function spacesRepos(_ctx: RepoContext): SpaceRepos {
  return {};
}
