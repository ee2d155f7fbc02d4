import type { RepoContext } from './index.ts';
import { VersionRuntimeRepository } from './runtime/version-runtimes.ts';

/** The runtime group's repositories (see index.ts): what each version runs. */
export interface RuntimeRepos {
  versionRuntimes: VersionRuntimeRepository;
}

export function runtimeRepos(ctx: RepoContext): RuntimeRepos {
  return { versionRuntimes: new VersionRuntimeRepository(ctx) };
}
