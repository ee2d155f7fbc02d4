import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../../domain/auth/principal.ts';
import {
  type ArchiveLimits,
  DEFAULT_MAX_RATIO,
  RATIO_FLOOR_BYTES,
  readArchive,
} from '../../domain/publishing/archive.ts';
import { FileIntake, TooLargeError } from '../../domain/publishing/ingest.ts';
import {
  INLINE_MAX_BYTES,
  INLINE_MAX_FILES,
  type OneCallInput,
  OneCallPublisher,
} from '../../domain/publishing/publish.ts';
import type { DeclaredFile } from '../../domain/publishing/service.ts';
import { ApiError } from '../../errors/problem.ts';
import { InlinePublishBody, PublishPayload, PublishReceipt } from '../../schemas/publishing.ts';
import { compileValidator, toValidationError } from '../../schemas/validation.ts';
import { formParts } from '../forms.ts';
import { send } from '../present.ts';
import { presentReceipt } from '../presenters/publishing.ts';
import { addRoute } from '../route.ts';

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

/** The caps a publish is read under: the server's, and for anonymous publishers the smaller of both. */
interface PublishCaps {
  maxFiles: number;
  maxFileBytes: number;
  maxVersionBytes: number;
}

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
  const { config, spaces, publishing, blobs, db, clock, spool } = services;
  const publisher = new OneCallPublisher(db, clock, spaces, publishing, services.log);
  const general: PublishCaps = {
    maxFiles: config.limits.maxFilesPerVersion,
    maxFileBytes: config.limits.maxFileBytes,
    maxVersionBytes: config.limits.maxVersionBytes,
  };
  const anonymous: PublishCaps = {
    maxFiles: Math.min(general.maxFiles, config.anonymous.maxFilesPerVersion),
    maxFileBytes: Math.min(general.maxFileBytes, config.anonymous.maxFileBytes),
    maxVersionBytes: Math.min(general.maxVersionBytes, config.anonymous.maxVersionBytes),
  };
  const archiveLimitsOf = (caps: PublishCaps): ArchiveLimits => ({
    // The container may add headers and directory entries on top of the files' own bytes.
    maxArchiveBytes: caps.maxVersionBytes + ARCHIVE_OVERHEAD_BYTES,
    maxExpandedBytes: caps.maxVersionBytes,
    maxFiles: caps.maxFiles,
    maxFileBytes: caps.maxFileBytes,
    maxRatio: DEFAULT_MAX_RATIO,
    ratioFloorBytes: RATIO_FLOOR_BYTES,
  });

  /** Stores one file of the publish; a file over the per-file cap is refused by name. */
  async function ingest(
    intake: FileIntake,
    p: string,
    bytes: AsyncIterable<Buffer> | Iterable<Buffer>,
  ): Promise<DeclaredFile> {
    try {
      return await intake.add(p, bytes);
    } catch (err) {
      if (err instanceof TooLargeError) {
        throw new ApiError('version_file_too_large', `"${p}" is larger than ${err.limit} bytes.`, {
          details: { path: p, limit: err.limit },
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

  async function readMultipart(req: FastifyRequest, intake: FileIntake, caps: PublishCaps) {
    const files: DeclaredFile[] = [];
    const hash = createHash('sha256');
    const archiveLimits = archiveLimitsOf(caps);
    let payloadText: string | undefined;
    const parts = formParts(req, {
      preservePath: true,
      limits: {
        fileSize: Math.max(caps.maxFileBytes, archiveLimits.maxArchiveBytes) + 1,
        files: caps.maxFiles + 1,
        parts: caps.maxFiles + 20,
        fieldSize: 1024 * 1024,
      },
    } as never);
    for await (const part of parts) {
      if (part.type === 'file') {
        if (part.fieldname === 'files' || part.fieldname === 'file') {
          const f = await ingest(intake, part.filename, part.bytes);
          files.push(f);
          hash.update(`f\0${f.path}\0${f.sha256}\n`);
          if (files.length > caps.maxFiles) {
            throw new ApiError(
              'version_file_count_exceeded',
              `A version holds at most ${caps.maxFiles} files.`,
              {
                pointer: '/files',
                details: { limit: caps.maxFiles },
              },
            );
          }
        } else if (part.fieldname === 'archive') {
          hash.update('a\0');
          const sink = async (p: string, bytes: AsyncIterable<Buffer>) => {
            if (files.length >= caps.maxFiles) {
              throw new ApiError(
                'publish_archive_file_count_exceeded',
                `The publish holds more than ${caps.maxFiles} files.`,
                { details: { limit: caps.maxFiles } },
              );
            }
            files.push(await ingest(intake, p, bytes));
          };
          await readArchive(part.bytes, part.filename, archiveLimits, spool, sink, (c) => hash.update(c));
        } else {
          part.skip();
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

  async function readInline(body: unknown, intake: FileIntake) {
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
    for (const [i, f] of b.files.entries()) files.push(await ingest(intake, f.path, [decoded[i]!]));
    const { files: _f, ...input } = b;
    const bodyHash = createHash('sha256').update(JSON.stringify(body)).digest('hex');
    return { files, input: input as OneCallInput, bodyHash };
  }

  /** Reads the body's files into the blob store: all of them durable and recorded, or none recorded. */
  async function readBody(req: FastifyRequest, caps: PublishCaps) {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'multipart/form-data' && type !== 'application/json') {
      (req.body as Readable | undefined)?.resume?.();
      throw new ApiError(
        'unsupported_publish_media_type',
        'Send multipart/form-data (files or an archive part) or JSON with inline files.',
        { details: { accepted: ['multipart/form-data', 'application/json'] } },
      );
    }
    const intake = new FileIntake({ blobs, db, clock, spool }, caps.maxFileBytes);
    try {
      const read =
        type === 'multipart/form-data'
          ? await readMultipart(req, intake, caps)
          : await readInline(req.body, intake);
      await intake.commit();
      return read;
    } catch (err) {
      await intake.abort().catch(() => {});
      throw err;
    }
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
            { facts: { challenge: {} } },
          );
        }
        if (anon || req.principal?.kind === 'space_key')
          await services.rateLimits.anonymousPublish.take(req.ip);
        const small = anon || req.principal?.kind === 'space_key';
        const read = await readBody(req, small ? anonymous : general);
        if (anon || req.principal?.kind === 'space_key') checkAnonymousLimits(read.files);
        const key = req.headers['idempotency-key'];
        // Credential-free retries are scoped to the client address.
        const scopeP = req.principal ?? anonymousScope(req.ip);
        const r = await publisher.idempotent(
          scopeP,
          Array.isArray(key) ? key[0] : key,
          read.bodyHash,
          async () => {
            let p = req.principal ?? scopeP;
            let claim: { key: string; expiresAt: string } | null = null;
            const createAnonymous = async () => {
              const { space, key: spaceKey } = await services.anonymous.createSpace(req.ip, {
                title: read.input.title,
              });
              p = spacePrincipal(space.tenant_id, space.id);
              claim = { key: spaceKey, expiresAt: space.claim_expires_at! };
              return { space, principal: p };
            };
            const result = await publisher.publish(
              p,
              read.input,
              read.files,
              anon ? createAnonymous : undefined,
            );
            if (p.kind === 'space_key' && !result.noop) await services.anonymous.touch(result.space.id);
            const data: Record<string, unknown> = await presentReceipt(
              config.publicUrl,
              spaces,
              publishing,
              result,
            );
            if (claim) {
              const { key: claimKey, expiresAt } = claim as { key: string; expiresAt: string };
              const fresh = await services.db
                .selectFrom('spaces')
                .select('claim_expires_at')
                .where('id', '=', result.space.id)
                .executeTakeFirst();
              data.claim = {
                key: claimKey,
                claimUrl: services.anonymous.claimUrl(claimKey),
                openUrl: `${spaces.liveUrlOf(result.space)}/__/${claimKey}`,
                expiresAt: fresh?.claim_expires_at ?? expiresAt,
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
