import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.ts';
import type { Action } from '../program.ts';
import { type PublishOptions, publish } from '../publish.ts';
import { ACCESS_LABEL } from '../publish-report.ts';
import { openBrowser, space, spaceWithAccess } from './shared.ts';

/** The project directory: publish, init, link, unlink, inspect, open. */
export const projectActions: Record<string, Action> = {
  async publish(ctx, [input], o) {
    await publish(ctx, input, o as PublishOptions);
  },

  async init(ctx, _args, o) {
    const file = path.join(ctx.io.cwd, 'spaces.jsonc');
    if (fs.existsSync(file) && !o.force)
      throw new UsageError('spaces.jsonc exists already; --force overwrites it.');
    const schema = `${ctx.apiUrl}/schemas/spaces.json`;
    fs.writeFileSync(file, settingsTemplate(schema, ctx.apiUrl));
    ctx.result({ path: file, schema }, () =>
      [
        `Wrote ${file}.`,
        'It is published with the site; uncomment what you need (your editor completes keys from its $schema).',
      ].join('\n'),
    );
  },

  async link(ctx, [ref]) {
    const s = await space(ctx, ref);
    const prev = ctx.state.read();
    ctx.state.write({
      apiUrl: ctx.apiUrl,
      spaceId: s.id,
      slug: s.slug,
      liveUrl: s.liveUrl,
      teamId: s.teamId,
      ...(prev?.spaceId === s.id && prev.spaceKey
        ? {
            spaceKey: prev.spaceKey,
            claimUrl: prev.claimUrl,
            openUrl: prev.openUrl,
            expiresAt: prev.expiresAt,
          }
        : {}),
    });
    ctx.result(
      { spaceId: s.id, slug: s.slug, liveUrl: s.liveUrl, state: ctx.state.file },
      () => `Linked ${ctx.io.cwd} to ${s.slug} (${s.liveUrl}).`,
    );
  },

  async unlink(ctx) {
    ctx.state.clear();
    ctx.result({ unlinked: true }, () => 'Unlinked.');
  },

  async inspect(ctx, [ref]) {
    const { space: s, access } = await spaceWithAccess(ctx, ref);
    const claim = s.claimState;
    const linked = ctx.linked;
    ctx.result({ ...s, access }, () =>
      [
        `${s.title} (${s.slug}, ${s.id})`,
        `  Live:      ${s.liveUrl}`,
        ...(s.anonymous && linked?.spaceId === s.id && linked.openUrl
          ? [`  Open:      ${linked.openUrl}`]
          : []),
        `  Access:    ${s.anonymous ? 'only through the Open link until claimed' : ACCESS_LABEL[access]}`,
        `  Team:      ${s.teamSlug ?? (s.anonymous ? 'anonymous' : '-')}`,
        `  Status:    ${s.status}${s.disabled ? ` (disabled: ${s.disabled.reasonCode})` : ''}`,
        ...Object.entries(s.channels).map(([n, c]) => `  Channel:   ${n} → ${c.versionId} (${c.updatedAt})`),
        // A claimed space keeps its old deadline in claimState; only an unclaimed one still expires.
        ...(s.anonymous && claim?.expiresAt ? [`  Expires:   ${claim.expiresAt} unless claimed`] : []),
        ...(claim?.claimedAt ? [`  Claimed:   ${claim.claimedAt}`] : []),
        `  Settings:  ${s.config ? JSON.stringify(s.config) : 'defaults'}`,
      ].join('\n'),
    );
  },

  async open(ctx, [ref]) {
    const linked = ctx.linked;
    // An unclaimed space shows a notice at its live URL; its publisher's way in is the Open link.
    const url =
      !ref && !ctx.opts.space && !ctx.io.env.SPACES_SPACE && linked
        ? (linked.openUrl ?? linked.liveUrl)
        : (await space(ctx, ref)).liveUrl;
    ctx.result({ url }, () => url);
    if (!ctx.json && ctx.io.stdout.isTTY) openBrowser(url);
  },
};

/**
 * The settings file `init` writes: valid as it is and with every example uncommented (each example
 * line ends in a comma but the last, which the server's JSONC reader and the schema both accept).
 */
export function settingsTemplate(schema: string, apiUrl: string): string {
  return `{
  // Settings of this site, read by the server when you publish it. Every key: \`spaces docs settings\`
  // or ${apiUrl}/docs/settings
  "$schema": "${schema}",
  // "cleanUrls": true,
  // "fallback": "/index.html",
  // "redirects": [{ "source": "/old", "destination": "/new", "status": 301 }],
  // "headers": [{ "source": "/*", "headers": [{ "key": "X-Frame-Options", "value": "DENY" }] }],
  // "meta": { "title": "My site", "description": "What it is about" }
}
`;
}
