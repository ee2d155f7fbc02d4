import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { Static } from '@sinclair/typebox';
import type { Build, BuildLogLine, BuildResponse, CreateBuildBody } from '../../schemas/builds.ts';
import { paginate, SpacesProblem, sendRaw, streamOf, unwrap } from '../../sdk/index.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { collect } from '../files.ts';
import type { Action } from '../program.ts';
import { tarOf } from '../tar.ts';
import { space, table } from './shared.ts';

type BuildT = Static<typeof Build>;
type Line = Static<typeof BuildLogLine>;
const TERMINAL = new Set(['succeeded', 'failed', 'canceled', 'skipped']);

function summary(b: BuildT): string {
  const lines = [`${b.id}  ${b.status}${b.channel ? `  → ${b.channel}` : ''}`];
  const src = b.source;
  lines.push(
    `  source: ${src.type}${src.url ? ` ${src.url}` : ''}${src.ref ? ` @ ${src.ref}` : ''}${src.commitSha ? ` (${src.commitSha.slice(0, 12)})` : ''}`,
  );
  lines.push(`  branch: ${b.branch ?? '(production)'}`);
  if (b.versionId) lines.push(`  version: ${b.versionId}`);
  if (b.error) lines.push(`  error: ${b.error.code}: ${b.error.message}`);
  lines.push(`  created ${b.createdAt}${b.finishedAt ? `, finished ${b.finishedAt}` : ''}`);
  return lines.join('\n');
}

const printLine = (ctx: Context, l: Pick<Line, 'stream' | 'line'>) => {
  if (ctx.streaming) ctx.writeJsonLine({ event: 'log', data: l });
  else if (!ctx.json) (l.stream === 'stderr' ? ctx.err.bind(ctx) : ctx.out.bind(ctx))(l.line);
};

/**
 * Follows a build's log (the API's NDJSON stream) until the build ends; answers the finished build.
 * Lines go to stdout (stderr lines to stderr); with --json --stream each is a `log` event.
 */
async function follow(ctx: Context, id: string): Promise<BuildT> {
  const res = await streamOf(
    ctx.spaceApi.GET('/v1/builds/{buildId}/logs', {
      params: { path: { buildId: id }, query: { follow: true } },
      parseAs: 'stream',
    }),
  );
  let rest = '';
  let end: BuildT | null = null;
  const decoder = new TextDecoder();
  const take = (text: string) => {
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      const item = JSON.parse(raw) as ({ type: 'line' } & Line) | { type: 'end'; build: BuildT };
      if (item.type === 'line') printLine(ctx, item);
      else end = item.build;
    }
  };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    rest += decoder.decode(chunk, { stream: true });
    const cut = rest.lastIndexOf('\n');
    if (cut >= 0) {
      take(rest.slice(0, cut));
      rest = rest.slice(cut + 1);
    }
  }
  take(rest);
  // The stream broke before the end: read the build as it is.
  return end ?? (await getBuild(ctx, id));
}

async function getBuild(ctx: Context, id: string): Promise<BuildT> {
  return (await unwrap(ctx.spaceApi.GET('/v1/builds/{buildId}', { params: { path: { buildId: id } } }))).data;
}

/** A finished build that did not succeed ends the command with exit code 1. */
function outcome(ctx: Context, b: BuildT): void {
  if (b.status === 'succeeded' || b.status === 'skipped' || !TERMINAL.has(b.status)) {
    ctx.result(b, () => summary(b));
    return;
  }
  throw new SpacesProblem({
    type: 'about:blank',
    title: `Build ${b.status}`,
    status: 0,
    code: b.error?.code ?? `build_${b.status}`,
    detail: `Build ${b.id} ${b.status}${b.error ? `: ${b.error.message}` : ''}`,
    requestId: '',
    suggestions: [
      `\`spaces builds logs ${b.id}\` shows its log; \`spaces builds retry ${b.id}\` runs it again.`,
    ],
  });
}

/** Builds: start one (from a folder or the repository connection), list, show, logs, cancel, retry; the git remote. */
export const buildActions: Record<string, Action> = {
  async build(ctx, [dir], o) {
    ctx.requireToken();
    const spaceRef = ctx.spaceRef();
    if (dir && o.ref) throw new UsageError('Give a folder or --ref, not both.');
    const body: Static<typeof CreateBuildBody> = o.ref
      ? { ref: o.ref as string }
      : dir || !o.connection
        ? { source: { type: 'upload' } }
        : {};
    if (o.branch) body.branch = o.branch as string;
    const created = await unwrap(
      ctx.spaceApi.POST('/v1/spaces/{spaceId}/builds', { params: { path: { spaceId: spaceRef } }, body }),
    );
    let b = created.data as BuildT;
    if (created.upload) {
      const { files } = await collect(dir || '.');
      if (!files.length) throw new UsageError(`${dir || '.'} has no files to build.`);
      const archive = gzipSync(tarOf(files));
      ctx.err(`Uploading ${files.length} files (${archive.length} bytes) for build ${b.id}…`);
      b = (
        (await (
          await sendRaw(ctx.fetchWith(ctx.spaceToken), created.upload.url, {
            method: 'PUT',
            body: archive,
            headers: { 'content-type': 'application/gzip' },
          })
        ).json()) as Static<typeof BuildResponse>
      ).data;
    }
    if (!o.follow) {
      ctx.result(b, () => `${summary(b)}\n  \`spaces builds logs ${b.id} --follow\` follows its log.`);
      return;
    }
    outcome(ctx, await follow(ctx, b.id));
  },

  async 'builds.ls'(ctx, _args, o) {
    ctx.requireToken();
    const r = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/builds', {
        params: { path: { spaceId: ctx.spaceRef() }, query: { limit: Number(o.limit ?? 20) } },
      }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((b) => [
              b.id,
              b.status,
              b.branch ?? '(production)',
              b.source.type,
              b.channel ?? '-',
              b.createdAt,
            ]),
            ['ID', 'STATUS', 'BRANCH', 'SOURCE', 'CHANNEL', 'CREATED'],
          )
        : 'No builds yet. `spaces build` starts one.',
    );
  },

  async 'builds.show'(ctx, [id]) {
    ctx.requireToken();
    const b = await getBuild(ctx, id!);
    const events = (
      await unwrap(ctx.spaceApi.GET('/v1/builds/{buildId}/events', { params: { path: { buildId: id! } } }))
    ).data;
    ctx.result({ ...b, events }, () =>
      [summary(b), '  states:', ...events.map((e) => `    ${e.at}  ${e.status}`)].join('\n'),
    );
  },

  async 'builds.logs'(ctx, [id], o) {
    ctx.requireToken();
    if (o.follow) {
      const b = await follow(ctx, id!);
      if (ctx.json && !ctx.streaming) ctx.result(b, () => undefined);
      else if (!ctx.json) ctx.err(`Build ${b.id} ${b.status}.`);
      return;
    }
    // The API pages newest first; printed oldest first.
    const lines: Line[] = [];
    for await (const l of paginate((cursor) =>
      ctx.spaceApi.GET('/v1/builds/{buildId}/logs', {
        params: { path: { buildId: id! }, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
      }),
    ))
      lines.push(l);
    lines.reverse();
    if (ctx.json) ctx.result(lines, () => undefined);
    else for (const l of lines) printLine(ctx, l);
  },

  async 'builds.cancel'(ctx, [id]) {
    ctx.requireToken();
    const b = (
      await unwrap(ctx.spaceApi.POST('/v1/builds/{buildId}/cancel', { params: { path: { buildId: id! } } }))
    ).data;
    ctx.result(b, () => (b.cancelRequested && b.status === 'running' ? `Canceling ${b.id}…` : summary(b)));
  },

  async 'builds.retry'(ctx, [id], o) {
    ctx.requireToken();
    const b = (
      await unwrap(ctx.spaceApi.POST('/v1/builds/{buildId}/retry', { params: { path: { buildId: id! } } }))
    ).data;
    if (!o.follow) {
      ctx.result(b, () => `Retrying as ${summary(b)}`);
      return;
    }
    outcome(ctx, await follow(ctx, b.id));
  },

  async 'builds.analyze'(ctx, _args, o) {
    ctx.requireToken();
    const body: { ref?: string; apply?: 'best' } = {};
    if (o.ref) body.ref = o.ref as string;
    if (o.apply) body.apply = 'best';
    const a = (
      await unwrap(
        ctx.spaceApi.POST('/v1/spaces/{spaceId}/repository-connection/analyze', {
          params: { path: { spaceId: ctx.spaceRef() } },
          body,
        }),
      )
    ).data;
    ctx.result(a, () =>
      [
        `${a.ref}${a.commitSha ? ` (${a.commitSha.slice(0, 12)})` : ''}: ${a.candidates.length} candidate${a.candidates.length === 1 ? '' : 's'}, best first`,
        table(
          a.candidates.map((c) => [
            String(c.score),
            c.appRoot,
            c.framework,
            c.packageManager ?? '-',
            c.buildCommand ?? '-',
            c.outputDirectory,
          ]),
          ['SCORE', 'APP ROOT', 'FRAMEWORK', 'PM', 'BUILD', 'OUTPUT'],
        ),
        ...(a.candidates[0]
          ? [`  why ${a.candidates[0].appRoot}: ${a.candidates[0].reasons.join(', ')}`]
          : []),
        'Settings a build runs with:',
        ...Object.entries(a.settings).map(([k, v]) => `  ${k} = ${JSON.stringify(v.value)} (${v.source})`),
        a.applied
          ? `Applied ${a.applied.appRoot} (${a.applied.framework}) to the repository connection.`
          : '`spaces builds analyze --apply` saves the best candidate on the repository connection.',
      ].join('\n'),
    );
  },

  async 'git.remote'(ctx, _args, o) {
    ctx.requireToken();
    const s = await space(ctx);
    if (!s.git?.remoteUrl)
      throw new UsageError(
        s.git?.managedBy === 'githost'
          ? 'This space deploys from its git host; push there instead.'
          : 'This space has no git remote (anonymous spaces have none; claim it first).',
      );
    const url = s.git.remoteUrl;
    const name = (o.name as string | undefined) ?? 'spaces';
    const branch = s.git.defaultBranch ?? 'main';
    let added = false;
    if (o.add) {
      const run = promisify(execFile);
      const has = await run('git', ['remote', 'get-url', name]).then(
        () => true,
        () => false,
      );
      await run('git', ['remote', has ? 'set-url' : 'add', name, url]);
      added = true;
    }
    ctx.result({ remoteUrl: url, name, defaultBranch: branch, added }, () =>
      [
        url,
        '',
        added ? `Added the remote \`${name}\` to this repository.` : `Add it:  git remote add ${name} ${url}`,
        `Push:    git push ${name} ${branch}      (builds and goes live; other branches go to br-<branch> previews)`,
        `Delete a preview:  git push ${name} :BRANCH`,
        'Git asks for a user name and password: user `t`, password an API key or space key, e.g.',
        `  git -c credential.helper='!f() { echo username=t; echo "password=$SPACES_TOKEN"; }; f' push ${name} ${branch}`,
      ].join('\n'),
    );
  },
};
