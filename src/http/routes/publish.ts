import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../../domain/auth/principal.ts';
import {
  type ArchiveLimits,
  DEFAULT_MAX_RATIO,
  RATIO_FLOOR_BYTES,
  readTarGz,
  readZip,
} from '../../domain/publishing/archive.ts';
import { ingestStream, recordBlobs, TooLargeError } from '../../domain/publishing/ingest.ts';
import {
  INLINE_MAX_BYTES,
  INLINE_MAX_FILES,
  type OneCallInput,
  OneCallPublisher,
} from '../../domain/publishing/publish.ts';
import type { DeclaredFile } from '../../domain/publishing/service.ts';
import { ApiError } from '../../errors/problem.ts';
import { InlinePublishBody, PublishPayload, PublishReceipt } from '../../schemas/publishing.ts';
import { send } from '../present.ts';
import { presentReceipt } from '../presenters/publishing.ts';
import { addRoute } from '../route.ts';
import { compileValidator, toValidationError } from '../validation.ts';

/** A principal for the anonymous space just created (acts like its space key). */
function spacePrincipal(tenantId: string, spaceId: string): Principal {
  return {
    kind: 'space_key',
    credentialId: `anonymous:${spaceId}`,
    tenantId,
    userId: null,
    teamIds: [],
    scopes: new Set(['spaces:read', 'publish:write', 'spaces:publish']),
    spaceId,
  };
}

function anonymousScope(ip: string): Principal {
  return {
    kind: 'space_key',
    credentialId: `ip:${ip}`,
    tenantId: 'anonymous',
    userId: null,
    teamIds: [],
    scopes: new Set(),
    spaceId: null,
  };
}

const ARCHIVE_OVERHEAD_BYTES = 64 * 1024;

export function publishRoutes(app: FastifyInstance): void {
  const services = app.services;
  /** Unclaimed spaces take smaller versions (SPACES_ANON_*); a breach stores nothing new. */
  const checkAnonymousLimits = (files: DeclaredFile[]) => {
    const lim = services.config.anonymous;
    if (files.length > lim.maxFilesPerVersion) {
      throw new ApiError(
        'version_file_count_exceeded',
        `Anonymous versions hold at most ${lim.maxFilesPerVersion} files.`,
        {
          details: { limit: lim.maxFilesPerVersion, files: files.length },
          suggestions: ['Sign in (`spaces login`) for larger versions.'],
        },
      );
    }
    let total = 0;
    for (const f of files) {
      total += f.size;
      if (f.size > lim.maxFileBytes) {
        throw new ApiError(
          'version_file_too_large',
          `${f.path} is larger than ${lim.maxFileBytes} bytes, the anonymous limit.`,
          {
            details: { limit: lim.maxFileBytes, path: f.path, size: f.size },
          },
        );
      }
    }
    if (total > lim.maxVersionBytes) {
      throw new ApiError(
        'version_total_bytes_exceeded',
        `Anonymous versions hold at most ${lim.maxVersionBytes} bytes.`,
        {
          details: { limit: lim.maxVersionBytes, bytes: total },
        },
      );
    }
  };
  const { config, spaces, publishing, blobs, db, clock } = services;
  const publisher = new OneCallPublisher(db, clock, spaces, publishing);
  const limits = config.limits;
  const archiveLimits: ArchiveLimits = {
    // The container may add headers and directory entries on top of the files' own bytes.
    maxArchiveBytes: limits.maxVersionBytes + ARCHIVE_OVERHEAD_BYTES,
    maxExpandedBytes: limits.maxVersionBytes,
    maxFiles: limits.maxFilesPerVersion,
    maxFileBytes: limits.maxFileBytes,
    maxRatio: DEFAULT_MAX_RATIO,
    ratioFloorBytes: RATIO_FLOOR_BYTES,
  };
  const tmpDir = path.join(config.dataDir, 'tmp');

  /** Stores one file of the publish; a file over the per-file cap is refused by name. */
  async function ingest(p: string, stream: Readable): Promise<DeclaredFile> {
    try {
      const r = await ingestStream(blobs, tmpDir, stream, limits.maxFileBytes);
      await recordBlobs(db, [r], clock.now().toISOString());
      return { path: p, ...r };
    } catch (err) {
      if (err instanceof TooLargeError) {
        throw new ApiError('version_file_too_large', `"${p}" is larger than ${limits.maxFileBytes} bytes.`, {
          details: { path: p, limit: limits.maxFileBytes },
        });
      }
      throw err;
    }
  }

  function parsePayload(text: string | undefined): OneCallInput {
    if (text === undefined || text.trim() === '') return {};
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError('invalid_publish_payload', 'The `payload` field is not valid JSON.', {
        pointer: '/payload',
      });
    }
    const check = compileValidator(PublishPayload, 'body');
    if (!check(value)) {
      const v = toValidationError(check.errors ?? [], 'body');
      throw new ApiError('invalid_publish_payload', v.detail, {
        pointer: `/payload${v.extras.pointer ?? ''}`,
      });
    }
    return value as OneCallInput;
  }

  /** An archive part: spooled to a temp file under the size cap, then read entry by entry. */
  async function readArchive(
    part: Readable,
    filename: string,
    out: DeclaredFile[],
    hash: ReturnType<typeof createHash>,
  ) {
    await fsp.mkdir(tmpDir, { recursive: true });
    const file = path.join(tmpDir, `archive-${randomBytes(8).toString('hex')}`);
    let size = 0;
    let head: Buffer | null = null;
    try {
      await pipeline(
        part,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            size += chunk.length;
            if (size > archiveLimits.maxArchiveBytes) {
              throw new ApiError(
                'publish_archive_too_large',
                `The archive is larger than ${archiveLimits.maxArchiveBytes} bytes.`,
                { details: { limit: archiveLimits.maxArchiveBytes } },
              );
            }
            if (!head) head = chunk.subarray(0, 4);
            hash.update(chunk);
            yield chunk;
          }
        },
        fs.createWriteStream(file),
      );
      const h = head as Buffer | null;
      const sink = async (p: string, s: Readable) => {
        out.push(await ingest(p, s));
        if (out.length > limits.maxFilesPerVersion) {
          throw new ApiError(
            'publish_archive_file_count_exceeded',
            `The publish holds more than ${limits.maxFilesPerVersion} files.`,
            { details: { limit: limits.maxFilesPerVersion } },
          );
        }
      };
      if (h && h[0] === 0x50 && h[1] === 0x4b) await readZip(file, archiveLimits, sink);
      else if ((h && h[0] === 0x1f && h[1] === 0x8b) || /\.(tgz|tar\.gz)$/i.test(filename)) {
        await readTarGz(fs.createReadStream(file), archiveLimits, sink);
      } else {
        throw new ApiError('invalid_publish_archive', 'The archive is neither a zip nor a .tar.gz.');
      }
    } finally {
      await fsp.rm(file, { force: true });
    }
  }

  async function readMultipart(req: FastifyRequest) {
    const files: DeclaredFile[] = [];
    const hash = createHash('sha256');
    let payloadText: string | undefined;
    const parts = req.parts({
      preservePath: true,
      limits: {
        fileSize: Math.max(limits.maxFileBytes, archiveLimits.maxArchiveBytes) + 1,
        files: limits.maxFilesPerVersion + 1,
        parts: limits.maxFilesPerVersion + 20,
        fieldSize: 1024 * 1024,
      },
    } as never);
    for await (const part of parts) {
      if (part.type === 'file') {
        if (part.fieldname === 'files' || part.fieldname === 'file') {
          const f = await ingest(part.filename, part.file);
          files.push(f);
          hash.update(`f\0${f.path}\0${f.sha256}\n`);
          if (files.length > limits.maxFilesPerVersion) {
            throw new ApiError(
              'version_file_count_exceeded',
              `A version holds at most ${limits.maxFilesPerVersion} files.`,
              { pointer: '/files', details: { limit: limits.maxFilesPerVersion } },
            );
          }
        } else if (part.fieldname === 'archive') {
          hash.update('a\0');
          await readArchive(part.file, part.filename, files, hash);
        } else {
          part.file.resume();
          throw new ApiError('invalid_publish_payload', `Unknown file field "${part.fieldname}".`, {
            pointer: `/${part.fieldname}`,
            suggestions: ['Send files as `files` parts (filename = path) or one `archive` part.'],
          });
        }
      } else if (part.fieldname === 'payload') {
        payloadText = String(part.value);
        hash.update(`p\0${payloadText}\n`);
      } else {
        throw new ApiError('invalid_publish_payload', `Unknown field "${part.fieldname}".`, {
          pointer: `/${part.fieldname}`,
        });
      }
    }
    if (files.length === 0) {
      throw new ApiError('invalid_publish_payload', 'The publish holds no files.', { pointer: '/files' });
    }
    return { files, input: parsePayload(payloadText), bodyHash: hash.digest('hex') };
  }

  async function readInline(body: unknown) {
    const check = compileValidator(InlinePublishBody, 'body');
    if (!check(body)) throw toValidationError(check.errors ?? [], 'body');
    const b = body as Static<typeof InlinePublishBody>;
    if (b.files.length > INLINE_MAX_FILES) {
      throw new ApiError(
        'publish_inline_limit_exceeded',
        `Inline publishes hold at most ${INLINE_MAX_FILES} files.`,
        {
          pointer: '/files',
          details: { limit: INLINE_MAX_FILES },
        },
      );
    }
    const decoded = b.files.map((f) => Buffer.from(f.content, f.encoding === 'base64' ? 'base64' : 'utf8'));
    const total = decoded.reduce((s, x) => s + x.length, 0);
    if (total > INLINE_MAX_BYTES) {
      throw new ApiError(
        'publish_inline_limit_exceeded',
        `Inline files add up to more than ${INLINE_MAX_BYTES} bytes.`,
        {
          pointer: '/files',
          details: { limit: INLINE_MAX_BYTES, bytes: total },
        },
      );
    }
    const files: DeclaredFile[] = [];
    for (const [i, f] of b.files.entries()) {
      const s = new PassThrough();
      s.end(decoded[i]);
      files.push(await ingest(f.path, s));
    }
    const { files: _f, ...input } = b;
    const bodyHash = createHash('sha256').update(JSON.stringify(body)).digest('hex');
    return { files, input: input as OneCallInput, bodyHash };
  }

  app.register(async (child) => {
    // JSON and multipart keep their parsers; zip/tar bodies must come as a multipart `archive` part.
    child.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

    addRoute(child, {
      method: 'POST',
      url: '/v1/publish',
      operationId: 'publish',
      summary: 'Publish files in one call',
      description:
        'Creates a space (or updates the one named by `spaceId`/`slug` in the payload) and publishes a version in one request. Bodies: `multipart/form-data` with `files` parts (the filename is the path in the site) or one `archive` part (zip or .tar.gz), plus an optional `payload` JSON field; or JSON with small inline files. `Idempotency-Key` makes retries safe.',
      tags: ['Versions'],
      auth: { accept: ['general', 'space_key'], scope: 'publish:write', optional: true },
      responses: { 201: PublishReceipt, 200: PublishReceipt },
      handler: async (req, reply) => {
        // No credential: an anonymous, claimable space (when the server allows it).
        const anon = req.principal === null;
        if (anon && !config.anonymous.enabled) {
          throw new ApiError(
            'unauthorized',
            'This server does not take anonymous publishes; send a credential.',
            {
              headers: { 'www-authenticate': 'Bearer realm="spaces"' },
            },
          );
        }
        if (anon || req.principal?.kind === 'space_key') services.rateLimits.anonymousPublish.take(req.ip);
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        let read: { files: DeclaredFile[]; input: OneCallInput; bodyHash: string };
        if (type === 'multipart/form-data') read = await readMultipart(req);
        else if (type === 'application/json') read = await readInline(req.body);
        else {
          (req.body as Readable | undefined)?.resume?.();
          throw new ApiError(
            'unsupported_publish_media_type',
            'Send multipart/form-data (files or an archive part) or JSON with inline files.',
            { details: { accepted: ['multipart/form-data', 'application/json'] } },
          );
        }
        if (anon || req.principal?.kind === 'space_key') checkAnonymousLimits(read.files);
        const key = req.headers['idempotency-key'];
        // Credential-free retries are scoped to the client address.
        const scopeP = req.principal ?? anonymousScope(req.ip);
        const r = await publisher.idempotent(
          scopeP,
          Array.isArray(key) ? key[0] : key,
          read.bodyHash,
          async () => {
            let p = req.principal;
            let claim: { key: string; expiresAt: string } | null = null;
            if (!p) {
              const { space, key: spaceKey } = await services.anonymous.createSpace(req.ip, {
                title: read.input.title,
              });
              p = spacePrincipal(space.tenant_id, space.id);
              read.input.spaceId = space.id;
              claim = { key: spaceKey, expiresAt: space.claim_expires_at! };
            }
            const result = await publisher.publish(p, read.input, read.files);
            if (p.kind === 'space_key' && !result.noop) await services.anonymous.touch(result.space.id);
            const data: Record<string, unknown> = await presentReceipt(
              config.publicUrl,
              spaces,
              publishing,
              result,
            );
            if (claim) {
              const fresh = await services.db
                .selectFrom('spaces')
                .select('claim_expires_at')
                .where('id', '=', result.space.id)
                .executeTakeFirst();
              data.claim = {
                key: claim.key,
                claimUrl: services.anonymous.claimUrl(claim.key),
                openUrl: `${spaces.liveUrlOf(result.space)}/__/${claim.key}`,
                expiresAt: fresh?.claim_expires_at ?? claim.expiresAt,
              };
            }
            return { status: result.noop ? 200 : 201, body: { data } };
          },
        );
        if (r.replayed) reply.header('idempotent-replayed', 'true');
        return send(reply, PublishReceipt, r.body as object, r.status);
      },
    });
  });
}
