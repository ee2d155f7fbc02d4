import { paginate, unwrap } from '../sdk/index.ts';
import type { Context } from './context.ts';
import type { HashedFile } from './files.ts';
import type { Access, PublishResult, Receipt } from './publish.ts';

export function human(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const u = ['KiB', 'MiB', 'GiB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${u[i]}`;
}

/** Who can see a site, as the label of its URL. */
export const ACCESS_LABEL: Record<Access, string> = {
  public: 'public',
  team: 'team only',
  private: 'private',
};

const ACCESS_NOTE: Record<Access, string> = {
  public: 'Anyone with the link can open it.',
  team: 'Only members of its team can open it (they sign in first); `--access public` makes it public.',
  private: 'Only people it is shared with can open it; `--access public` makes it public.',
};

export async function dryRun(ctx: Context, files: HashedFile[], spaceRef: string | null): Promise<void> {
  const live = new Map<string, string>();
  let space: Receipt['space'] | null = null;
  if (spaceRef) {
    const s = (
      await unwrap(ctx.spaceApi.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId: spaceRef } } }))
    ).data.space;
    space = { id: s.id, slug: s.slug, liveUrl: s.liveUrl };
    if (s.channels.live) {
      const path = { spaceId: s.id, versionId: s.channels.live.versionId };
      for await (const f of paginate((cursor) =>
        ctx.spaceApi.GET('/v1/spaces/{spaceId}/versions/{versionId}/files', {
          params: { path, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
        }),
      )) {
        live.set(f.path, f.sha256);
      }
    }
  }
  const upload = files
    .filter((f) => live.get(f.path) !== f.sha256)
    .map((f) => ({ path: f.path, size: f.size }));
  const paths = new Set(files.map((f) => f.path));
  const removed = [...live.keys()].filter((p) => !paths.has(p));
  const totalBytes = files.reduce((s, f) => s + f.size, 0);
  const result = {
    space,
    files: { total: files.length, bytes: totalBytes },
    dryRun: { upload, unchanged: files.length - upload.length, removed },
  };
  ctx.result(result, () => {
    const lines = [
      `Dry run: ${files.length} files (${human(totalBytes)})${space ? ` for ${space.slug}` : ' for a new space'}.`,
      `Would upload ${upload.length} new or changed files (${human(upload.reduce((s, f) => s + f.size, 0))}); ${result.dryRun.unchanged} unchanged, ${removed.length} removed.`,
    ];
    for (const f of upload.slice(0, 50)) lines.push(`  + ${f.path} (${human(f.size)})`);
    if (upload.length > 50) lines.push(`  … and ${upload.length - 50} more`);
    for (const p of removed.slice(0, 20)) lines.push(`  - ${p}`);
    lines.push(
      'The server also skips bytes it holds from other versions, so the real upload can be smaller.',
    );
    return lines.join('\n');
  });
}

/**
 * The outcome of a publish. A claimed space's URL is labelled with who can see it. An anonymous
 * space's live URL shows everyone else a "not claimed yet" notice, so the publisher's own way in —
 * the Open link — comes first.
 */
export function report(ctx: Context, r: PublishResult): void {
  ctx.result(r, () => {
    const lines: string[] = [];
    if (r.noop) lines.push(`No changes: the version already has these ${r.files.total} files.`);
    else {
      lines.push(
        `Published ${r.files.total} files (${human(r.files.bytes)}); uploaded ${r.uploaded.files} (${human(r.uploaded.bytes)}).`,
      );
    }
    const label = r.channel === 'preview' ? 'Preview' : 'Live';
    if (r.claim) {
      if (r.claim.openUrl) {
        lines.push(`  Open:     ${r.claim.openUrl}`);
        lines.push('            your link to the site: open this one (and keep it to yourself)');
      }
      lines.push(`  ${`${label}:`.padEnd(9)} ${r.siteUrl}`);
      lines.push('            others see a "not claimed yet" notice there until the space is claimed');
    } else {
      const who = r.access ? ` (${ACCESS_LABEL[r.access]})` : '';
      lines.push(`  ${label}${who}: ${r.siteUrl}`);
    }
    if (r.version) lines.push(`  Version:  v${r.version.number} ${r.version.id} (${r.version.status})`);
    if (r.immutableUrl) lines.push(`  Version URL: ${r.immutableUrl}`);
    // What the server noticed but did not refuse (keys with no effect yet, rules it skipped, …).
    for (const d of r.version?.diagnostics ?? [])
      lines.push(`  ${d.severity}: ${d.path ? `${d.path}: ` : ''}${d.message} (${d.code})`);
    if (r.channel === 'preview' && r.version)
      lines.push(
        `  The live site is unchanged; \`spaces promote v${r.version.number}\` makes this version live.`,
      );
    if (r.claim) {
      lines.push('');
      lines.push(
        `This space is anonymous${r.claim.expiresAt ? ` and expires at ${r.claim.expiresAt} unless claimed` : ''}. Claim it to keep it:`,
      );
      if (r.claim.claimUrl) lines.push(`  Claim:    ${r.claim.claimUrl}`);
      lines.push('  Or run `spaces login` and then `spaces spaces claim`.');
    } else if (r.access && r.channel === 'live') lines.push(`  ${ACCESS_NOTE[r.access]}`);
    return lines.join('\n');
  });
}
