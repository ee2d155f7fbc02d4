import type { RepoContext } from './index.ts';
import { ServableVersionRepository } from './serving/servable-versions.ts';
import { SiteHostRepository } from './serving/site-hosts.ts';

/** The serving group's repositories (see index.ts): the read model the site edge and access routes use. */
export interface ServingRepos {
  siteHosts: SiteHostRepository;
  servableVersions: ServableVersionRepository;
}

export function servingRepos(ctx: RepoContext): ServingRepos {
  return { siteHosts: new SiteHostRepository(ctx), servableVersions: new ServableVersionRepository(ctx) };
}
