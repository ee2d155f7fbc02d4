import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../domain/auth/principal.ts';
import type { Scope } from '../../domain/auth/scopes.ts';
import { GitRemotes } from '../../domain/builds/remote.ts';
import { ApiError } from '../../errors/problem.ts';
import { sendProblem } from '../errors.ts';
import { addRoute } from '../route.ts';

/**
 * The git smart-HTTP remote of team-owned spaces (§7): `<publicUrl>/git/<spaceId>.git`, HTTP Basic
 * with user `t` and a space key or API key as the password, served by the system `git http-backend`
 * (CGI). A push that moves branches starts their builds.
 */

const BASIC = { 'www-authenticate': 'Basic realm="spaces git", charset="UTF-8"' };
const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);

function basicPassword(header: string | undefined): string | null {
  const m = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!m) return null;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0 || text.slice(0, colon) !== 't') return null;
  return text.slice(colon + 1) || null;
}

export function gitRoutes(app: FastifyInstance): void {
  const { spaces, builds, credentials, config, log } = app.services;
  const remotes = new GitRemotes(path.join(config.dataDir, 'git'), builds);

  const refuse = (req: FastifyRequest, reply: FastifyReply, detail: string) =>
    sendProblem(req, reply, new ApiError('unauthorized', detail), BASIC);

  async function handle(
    req: FastifyRequest<{ Params: { spaceId: string; '*': string } }>,
    reply: FastifyReply,
  ) {
    const rest = `/${req.params['*'] ?? ''}`;
    const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
    const service = rest === '/info/refs' ? new URLSearchParams(query).get('service') : rest.slice(1);
    if (
      !service ||
      !SERVICES.has(service) ||
      !['/info/refs', '/git-upload-pack', '/git-receive-pack'].includes(rest)
    ) {
      throw new ApiError('not_found', 'Not a git smart-HTTP path (dumb HTTP is not served).');
    }
    const password = basicPassword(req.headers.authorization);
    if (!password)
      return refuse(req, reply, 'Authenticate with user `t` and a space key or API key as the password.');
    let p: Principal;
    try {
      p = await credentials.resolve(password);
    } catch {
      return refuse(req, reply, 'The key is not valid: unknown, expired or revoked.');
    }
    const scope: Scope = service === 'git-receive-pack' ? 'publish:write' : 'spaces:read';
    if (p.kind !== 'session' && !p.scopes.has(scope)) {
      throw new ApiError('forbidden', `The key lacks the ${scope} scope.`, {
        details: { requiredScope: scope },
      });
    }
    const spaceId = req.params.spaceId.replace(/\.git$/, '');
    const space = await spaces.resolve(p, spaceId);
    remotes.check(space);
    await remotes.ensure(space);
    const pushing = service === 'git-receive-pack' && rest !== '/info/refs';
    const before = pushing ? await remotes.branches(space.id) : null;

    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: remotes.root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        HOME: remotes.root,
        REMOTE_USER: 't',
        REMOTE_ADDR: req.ip,
        PATH_INFO: `/${space.id}.git${rest}`,
        QUERY_STRING: query,
        REQUEST_METHOD: req.method,
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-encoding']
          ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) }
          : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stderr.on('data', (d: Buffer) =>
      log.debug({ spaceId: space.id, stderr: d.toString() }, 'git http-backend'),
    );
    const body = req.body as unknown as Readable | undefined;
    if (body && req.method === 'POST') body.pipe(child.stdin);
    else child.stdin.end();

    reply.hijack();
    const res = reply.raw;
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n') >= 0 ? head.indexOf('\r\n\r\n') : head.indexOf('\n\n');
      if (end < 0) return;
      const sep = head.indexOf('\r\n\r\n') >= 0 ? 4 : 2;
      let status = 200;
      const headers: Record<string, string> = { 'cache-control': 'no-store' };
      for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const k = line.slice(0, i).trim().toLowerCase();
        const v = line.slice(i + 1).trim();
        if (k === 'status') status = Number.parseInt(v, 10) || 500;
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      headersDone = true;
      const restBytes = head.subarray(end + sep);
      if (restBytes.length) res.write(restBytes);
    });
    await new Promise<void>((resolve) => {
      child.on('close', async (code) => {
        if (!headersDone) {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.write('git http-backend failed\n');
        }
        res.end();
        if (pushing && code === 0 && before) {
          try {
            const started = await remotes.afterPush(p, space, before, await remotes.branches(space.id));
            log.info({ spaceId: space.id, builds: started }, 'git push started builds');
          } catch (err) {
            log.error({ err, spaceId: space.id }, 'could not start builds after a push');
          }
        }
        resolve();
      });
      child.on('error', () => resolve());
    });
  }

  app.register(async (child) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    for (const method of ['GET', 'POST'] as const) {
      addRoute(child, {
        method,
        url: '/git/:spaceId/*',
        operationId: method === 'GET' ? 'gitInfoRefs' : 'gitService',
        summary: 'Git smart-HTTP remote of a space',
        description:
          'For git clients: `git push https://t:<key>@<host>/git/<spaceId>.git main`. HTTP Basic, user `t`, a space key or API key as the password.',
        tags: ['Builds'],
        auth: null,
        hidden: true,
        bodyOptional: true,
        params: Type.Object({ spaceId: Type.String({ minLength: 1 }), '*': Type.String() }),
        responses: { 200: 'git smart-HTTP' },
        handler: handle,
      });
    }
  });
}
