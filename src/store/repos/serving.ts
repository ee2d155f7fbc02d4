import type { RepoContext } from './index.ts';

/** The serving group's repositories (see index.ts). */
// biome-ignore lint/complexity/noBannedTypes: filled in as the group's repositories are added
export type ServingRepos = {};

export function servingRepos(_ctx: RepoContext): ServingRepos {
  return {};
}
