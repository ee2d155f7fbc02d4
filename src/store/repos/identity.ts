import type { RepoContext } from './index.ts';

/** The identity group's repositories (see index.ts). */
// biome-ignore lint/complexity/noBannedTypes: filled in as the group's repositories are added
export type IdentityRepos = {};

export function identityRepos(_ctx: RepoContext): IdentityRepos {
  return {};
}
