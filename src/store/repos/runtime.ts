import type { RepoContext } from './index.ts';
import { SpaceDbConsoleRepository, SpaceDbOwnerRepository } from './runtime/space-db.ts';
import { VersionRuntimeRepository } from './runtime/version-runtimes.ts';

/** The runtime group's repositories (see index.ts): what each version runs, and the space databases' consoles and owners. */
export interface RuntimeRepos {
  versionRuntimes: VersionRuntimeRepository;
  /** Single-use console URLs of space databases. */
  spaceDbConsoles: SpaceDbConsoleRepository;
  /** Which instance owns each space database, and its latest snapshot. */
  spaceDbOwners: SpaceDbOwnerRepository;
}

export function runtimeRepos(ctx: RepoContext): RuntimeRepos {
  return {
    versionRuntimes: new VersionRuntimeRepository(ctx),
    spaceDbConsoles: new SpaceDbConsoleRepository(ctx),
    spaceDbOwners: new SpaceDbOwnerRepository(ctx),
  };
}
