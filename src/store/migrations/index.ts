import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.ts';
import * as m0002 from './0002_spaces.ts';
import * as m0003 from './0003_jobs.ts';
import * as m0004 from './0004_oauth.ts';
import * as m0005 from './0005_publishing.ts';
import * as m0006 from './0006_anonymous.ts';
import * as m0007 from './0007_tags.ts';
import * as m0008 from './0008_blob_data.ts';
import * as m0009 from './0009_version_layers.ts';
import * as m0010 from './0010_blob_used_at.ts';
import * as m0011 from './0011_continuation.ts';
import * as m0012 from './0012_changes.ts';
import * as m0013 from './0013_rate_windows.ts';
import * as m0014 from './0014_domains.ts';
import * as m0015 from './0015_certificates.ts';
import * as m0016 from './0016_space_primary_domain.ts';
import * as m0017 from './0017_team_domain_settings.ts';
import * as m0018 from './0018_builds.ts';
import * as m0019 from './0019_repository_connections.ts';
import * as m0020 from './0020_space_thumbnails.ts';
import * as m0021 from './0021_events.ts';
import * as m0022 from './0022_webhooks.ts';
import * as m0023 from './0023_access_log.ts';
import * as m0024 from './0024_connection_build_settings.ts';
import * as m0025 from './0025_space_list_order.ts';
import * as m0026 from './0026_access_daily.ts';
import * as m0027 from './0027_access.ts';
import * as m0031 from './0031_mail_outbox.ts';
import * as m0032 from './0032_version_runtimes.ts';
import * as m0033 from './0033_space_people.ts';
import * as m0040 from './0040_space_crons.ts';
import * as m0041 from './0041_runtime_logs.ts';
import * as m0042 from './0042_storage_objects.ts';
import * as m0043 from './0043_space_db_admin.ts';

/** Ordered migrations; names sort in the order they run. Each area appends its own file here. */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_spaces': m0002,
  '0003_jobs': m0003,
  '0004_oauth': m0004,
  '0005_publishing': m0005,
  '0006_anonymous': m0006,
  '0007_tags': m0007,
  '0008_blob_data': m0008,
  '0009_version_layers': m0009,
  '0010_blob_used_at': m0010,
  '0011_continuation': m0011,
  '0012_changes': m0012,
  '0013_rate_windows': m0013,
  '0014_domains': m0014,
  '0015_certificates': m0015,
  '0016_space_primary_domain': m0016,
  '0017_team_domain_settings': m0017,
  '0018_builds': m0018,
  '0019_repository_connections': m0019,
  '0022_webhooks': m0022,
  '0021_events': m0021,
  '0020_space_thumbnails': m0020,
  '0023_access_log': m0023,
  '0031_mail_outbox': m0031,
  '0025_space_list_order': m0025,
  '0033_space_people': m0033,
  '0027_access': m0027,
  '0026_access_daily': m0026,
  '0032_version_runtimes': m0032,
  '0024_connection_build_settings': m0024,
  '0040_space_crons': m0040,
  '0041_runtime_logs': m0041,
  '0042_storage_objects': m0042,
  '0043_space_db_admin': m0043,
};
