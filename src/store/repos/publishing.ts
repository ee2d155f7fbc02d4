import type { RepoContext } from './index.ts';
import { BlobDataRepository } from './publishing/blob-data.ts';
import { BlobRecordRepository } from './publishing/blob-records.ts';
import { ChannelRepository } from './publishing/channels.ts';
import { IdempotencyKeyRepository } from './publishing/idempotency-keys.ts';
import { VersionFileRepository } from './publishing/version-files.ts';
import { VersionRepository } from './publishing/versions.ts';

/** The publishing group's repositories (see index.ts): versions, files, the blob index, channels. */
export interface PublishingRepos {
  versions: VersionRepository;
  versionFiles: VersionFileRepository;
  blobRecords: BlobRecordRepository;
  /** Bytes of small blobs kept in the database (the inline blob store's). */
  blobData: BlobDataRepository;
  channels: ChannelRepository;
  idempotencyKeys: IdempotencyKeyRepository;
}

export function publishingRepos(ctx: RepoContext): PublishingRepos {
  return {
    versions: new VersionRepository(ctx),
    versionFiles: new VersionFileRepository(ctx),
    blobRecords: new BlobRecordRepository(ctx),
    blobData: new BlobDataRepository(ctx),
    channels: new ChannelRepository(ctx),
    idempotencyKeys: new IdempotencyKeyRepository(ctx),
  };
}
