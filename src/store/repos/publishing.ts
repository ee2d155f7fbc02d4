import type { RepoContext } from './index.ts';
import { ChannelRepository } from './publishing/channels.ts';

/** The publishing group's repositories (see index.ts): versions, files, blobs, channels. */
export interface PublishingRepos {
  channels: ChannelRepository;
}

export function publishingRepos(ctx: RepoContext): PublishingRepos {
  return { channels: new ChannelRepository(ctx) };
}
