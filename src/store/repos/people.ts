import type { RepoContext } from './index.ts';
import { SpacePeopleRepository } from './people/people.ts';
import { AccessRequestRepository } from './people/requests.ts';

/** The people group's repositories (see index.ts). */
export interface PeopleRepos {
  spacePeople: SpacePeopleRepository;
  accessRequests: AccessRequestRepository;
}

export function peopleRepos(ctx: RepoContext): PeopleRepos {
  return { spacePeople: new SpacePeopleRepository(ctx), accessRequests: new AccessRequestRepository(ctx) };
}
