import { revisionOf, type TagReleaseRow, type TagVersionRow } from '../../domain/tags/service.ts';
import type { TagEnvironment, TagVersionView } from '../../schemas/tags.ts';

export function presentTagVersion(row: TagVersionRow, releases: readonly TagReleaseRow[]): TagVersionView {
  return {
    id: row.id,
    teamId: row.team_id,
    status: row.status as TagVersionView['status'],
    baseVersionId: row.base_version_id,
    graphRevision: revisionOf(row),
    counts: { tags: row.tag_count, triggers: row.trigger_count, variables: row.variable_count },
    environments: releases.filter((r) => r.version_id === row.id).map((r) => r.environment as TagEnvironment),
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    submittedAt: row.submitted_at,
    submittedBy: row.submitted_by,
    approvedAt: row.approved_at,
    approvedBy: row.approved_by,
    publishedAt: row.published_at,
    publishedBy: row.published_by,
    abandonedAt: row.abandoned_at,
  };
}

export function presentTagGraph(row: TagVersionRow) {
  return { versionId: row.id, graph: JSON.parse(row.graph), graphRevision: revisionOf(row) };
}

export function presentTagRelease(row: TagReleaseRow) {
  return {
    environment: row.environment as TagEnvironment,
    versionId: row.version_id,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
}
