import { AccessLogRepository } from './analytics/access-log.ts';
import { AccessRollupRepository } from './analytics/access-rollups.ts';
import { UsageRepository } from './analytics/usage.ts';
import type { RepoContext } from './index.ts';

/** The analytics group's repositories (see index.ts): the access log and its rollups. */
export interface AnalyticsRepos {
  accessLog: AccessLogRepository;
  accessRollups: AccessRollupRepository;
  usage: UsageRepository;
}

export function analyticsRepos(ctx: RepoContext): AnalyticsRepos {
  return {
    accessLog: new AccessLogRepository(ctx),
    accessRollups: new AccessRollupRepository(ctx),
    usage: new UsageRepository(ctx),
  };
}
