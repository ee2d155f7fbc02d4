import { CertificateRepository } from './domains/certificates.ts';
import { DomainRepository } from './domains/domains.ts';
import { TeamDomainSettingsRepository } from './domains/team-settings.ts';
import type { RepoContext } from './index.ts';

/** The domains group's repositories (see index.ts). */
export interface DomainRepos {
  domains: DomainRepository;
  certificates: CertificateRepository;
  teamDomainSettings: TeamDomainSettingsRepository;
}

export function domainsRepos(ctx: RepoContext): DomainRepos {
  return {
    domains: new DomainRepository(ctx),
    certificates: new CertificateRepository(ctx),
    teamDomainSettings: new TeamDomainSettingsRepository(ctx),
  };
}
