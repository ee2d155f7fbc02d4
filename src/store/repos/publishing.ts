import type { RepoContext } from './index.ts';

/** The publishing group's repositories (see index.ts). */
// biome-ignore lint/complexity/noBannedTypes: filled in as the group's repositories are added
export type PublishingRepos = {};

export function publishingRepos(_ctx: RepoContext): PublishingRepos {
  return {};
}
