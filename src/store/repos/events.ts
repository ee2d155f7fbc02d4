import { EventRepository } from './events/events.ts';
import type { RepoContext } from './index.ts';

/** The events group's repositories (see index.ts): the event log. */
export interface EventRepos {
  events: EventRepository;
}

export function eventsRepos(ctx: RepoContext): EventRepos {
  return { events: new EventRepository(ctx) };
}
