import type { RepoContext } from './index.ts';
import { JobRepository } from './jobs/jobs.ts';

/** The jobs group's repositories (see index.ts): the durable job queue's rows. */
export interface JobRepos {
  jobs: JobRepository;
}

export function jobsRepos(ctx: RepoContext): JobRepos {
  return { jobs: new JobRepository(ctx) };
}
