import type { Static } from '@sinclair/typebox';
import {
  channelOfTarget,
  type PublishingService,
  type PublishResult,
  type VersionFileRow,
  type VersionRow,
} from '../../domain/publishing/service.ts';
import type { SpaceRow, SpaceService } from '../../domain/spaces/service.ts';
import type { ChannelMove, PublishReceipt, Version, VersionFile } from '../../schemas/publishing.ts';
import type { DB } from '../../store/schema.ts';

export function presentVersion(
  publishing: PublishingService,
  space: SpaceRow,
  v: VersionRow,
  channels: string[],
): Static<typeof Version> {
  return {
    id: v.id,
    spaceId: v.space_id,
    number: v.number,
    status: v.status as Static<typeof Version>['status'],
    target: v.target as 'production' | 'preview',
    message: v.message,
    source: v.source ? JSON.parse(v.source) : null,
    fileCount: v.file_count,
    totalBytes: Number(v.total_bytes),
    manifestDigest: v.manifest_digest,
    immutableUrl: publishing.versions.immutableUrlOf(space, v.id),
    channels,
    diagnostics: v.diagnostics ? JSON.parse(v.diagnostics) : [],
    createdAt: v.created_at,
    finalizedAt: v.finalized_at,
    expiresAt: v.expires_at,
    deletedAt: v.deleted_at,
  };
}

export function presentFile(f: VersionFileRow): Static<typeof VersionFile> {
  const out: Static<typeof VersionFile> = {
    path: f.path,
    sha256: f.sha256,
    size: Number(f.size),
    contentType: f.content_type,
  };
  if (f.encodings) out.encodings = JSON.parse(f.encodings);
  return out;
}

export function presentMove(m: DB['channel_history']): Static<typeof ChannelMove> {
  return {
    id: m.id,
    channel: m.channel,
    versionId: m.version_id,
    previousVersionId: m.previous_version_id,
    actor: m.actor,
    reason: m.reason,
    createdAt: m.created_at,
  };
}

/** The receipt both publish flows answer with. */
export async function presentReceipt(
  publicUrl: string,
  spaces: SpaceService,
  publishing: PublishingService,
  r: PublishResult,
): Promise<Static<typeof PublishReceipt>['data']> {
  const base = `${publicUrl}/v1/spaces/${r.space.id}/versions/${r.version.id}`;
  const channels = (await publishing.channels.of([r.version.id])).get(r.version.id) ?? [];
  let next: Static<typeof PublishReceipt>['data']['next'];
  if (r.version.status === 'uploading') {
    next = r.targets.length
      ? { action: 'upload', url: `${base}/finalize`, method: 'POST', batchUrl: `${base}/uploads` }
      : { action: 'finalize', url: `${base}/finalize`, method: 'POST' };
  } else next = { action: 'done' };
  return {
    space: { id: r.space.id, slug: r.space.slug, liveUrl: spaces.liveUrlOf(r.space) },
    version: presentVersion(publishing, r.space, r.version, channels),
    next,
    upload: { targets: r.targets },
    activation: {
      outcome: r.outcome,
      channel:
        r.outcome === 'activated' || r.outcome === 'unchanged' ? channelOfTarget(r.version.target) : null,
    },
    noop: r.noop,
    links: { inspect: `${publicUrl}/v1/spaces/${r.space.id}`, version: base },
  };
}
