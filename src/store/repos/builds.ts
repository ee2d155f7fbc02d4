import { BuildRepository } from './builds/builds.ts';
import { RepositoryConnectionRepository } from './builds/connections.ts';
import { BuildLogRepository } from './builds/logs.ts';
import type { RepoContext } from './index.ts';

/** The builds group's repositories (see index.ts). */
export interface BuildRepos {
  builds: BuildRepository;
  buildLogs: BuildLogRepository;
  repositoryConnections: RepositoryConnectionRepository;
}

export function buildsRepos(ctx: RepoContext): BuildRepos {
  return {
    builds: new BuildRepository(ctx),
    buildLogs: new BuildLogRepository(ctx),
    repositoryConnections: new RepositoryConnectionRepository(ctx),
  };
}
