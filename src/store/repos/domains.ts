import { DomainRepository } from './domains/domains.ts';
import type { RepoContext } from './index.ts';

/** The domains group's repositories (see index.ts). */
export interface DomainRepos {
  domains: DomainRepository;
}

export function domainsRepos(ctx: RepoContext): DomainRepos {
  return { domains: new DomainRepository(ctx) };
}
