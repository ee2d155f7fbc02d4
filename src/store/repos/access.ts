import { AccessCredentialRepository } from './access/credentials.ts';
import { AccessEpochRepository } from './access/epochs.ts';
import { GrantRepository } from './access/grants.ts';
import type { RepoContext } from './index.ts';

/** The site access group's repositories (see index.ts). */
export interface AccessRepos {
  grants: GrantRepository;
  accessCredentials: AccessCredentialRepository;
  accessEpochs: AccessEpochRepository;
}

export function accessRepos(ctx: RepoContext): AccessRepos {
  return {
    grants: new GrantRepository(ctx),
    accessCredentials: new AccessCredentialRepository(ctx),
    accessEpochs: new AccessEpochRepository(ctx),
  };
}
