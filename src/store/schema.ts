import type { AccessTables } from './tables/access.ts';
import type { AccessLogTables } from './tables/access-log.ts';
import type { AnonymousTables } from './tables/anonymous.ts';
import type { BuildTables } from './tables/builds.ts';
import type { ChangeTables } from './tables/changes.ts';
import type { CronTables } from './tables/crons.ts';
import type { DomainTables } from './tables/domains.ts';
import type { EventTables } from './tables/events.ts';
import type { FoundationTables } from './tables/foundation.ts';
import type { JobsTables } from './tables/jobs.ts';
import type { MailTables } from './tables/mail.ts';
import type { OAuthTables } from './tables/oauth.ts';
import type { PeopleTables } from './tables/people.ts';
import type { PublishingTables } from './tables/publishing.ts';
import type { RuntimeTables } from './tables/runtime.ts';
import type { SpaceTables } from './tables/spaces.ts';
import type { StorageTables } from './tables/storage.ts';
import type { TagTables } from './tables/tags.ts';
import type { ThumbnailTables } from './tables/thumbnails.ts';
import type { WebhookTables } from './tables/webhooks.ts';

/** The Kysely database type: every area's tables. */
export interface DB
  extends FoundationTables,
    SpaceTables,
    AnonymousTables,
    PublishingTables,
    JobsTables,
    OAuthTables,
    TagTables,
    ChangeTables,
    DomainTables,
    BuildTables,
    WebhookTables,
    EventTables,
    ThumbnailTables,
    AccessLogTables,
    MailTables,
    AccessTables,
    PeopleTables,
    RuntimeTables,
    CronTables,
    StorageTables {}
