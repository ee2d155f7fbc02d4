import type { Readable } from 'node:stream';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  archiveLimitsOf,
  type FileSource,
  inlineSource,
  type SourcePart,
} from '../../domain/publishing/sources.ts';
import { ApiError } from '../../errors/problem.ts';
import { InlinePublishBody, PublishReceipt } from '../../schemas/publishing.ts';
import { compileValidator, toValidationError } from '../../schemas/validation.ts';
import { formParts } from '../forms.ts';
import { send } from '../present.ts';
import { presentReceipt } from '../presenters/publishing.ts';
import { addRoute } from '../route.ts';

/**
 * A multipart publish body as a file source: `files`/`file` parts (the filename is the path), one
 * `archive` part, and an optional `payload` field. Anything else is refused by name. The parser's
 * own limits sit a little above the publish caps, which the domain enforces with its own codes.
 */
function multipartSource(req: FastifyRequest, caps: { maxFiles: number; maxPartBytes: number }): FileSource {
  return {
    type: 'direct-upload',
    async *parts(): AsyncGenerator<SourcePart> {
      const parts = formParts(req, {
        preservePath: true,
        limits: {
          fileSize: caps.maxPartBytes + 1,
          files: caps.maxFiles + 1,
          parts: caps.maxFiles + 20,
          fieldSize: 1024 * 1024,
        },
      } as never);
      for await (const part of parts) {
        if (part.type === 'file') {
          if (part.fieldname === 'files' || part.fieldname === 'file') {
            yield { type: 'file', path: part.filename, bytes: part.bytes };
          } else if (part.fieldname === 'archive') {
            yield { type: 'archive', filename: part.filename, bytes: part.bytes };
          } else {
            part.skip();
            throw new ApiError('invalid_publish_payload', `Unknown file field "${part.fieldname}".`, {
              pointer: `/${part.fieldname}`,
              suggestions: ['Send files as `files` parts (filename = path) or one `archive` part.'],
            });
          }
        } else if (part.fieldname === 'payload') {
          yield { type: 'payload', text: String(part.value) };
        } else {
          throw new ApiError('invalid_publish_payload', `Unknown field "${part.fieldname}".`, {
            pointer: `/${part.fieldname}`,
          });
        }
      }
    },
  };
}

export function publishRoutes(app: FastifyInstance): void {
  const services = app.services;
  const { config, spaces, publishing, publisher } = services;
  const inlineCheck = compileValidator(InlinePublishBody, 'body');

  /** The request body as a file source: multipart (files or an archive) or inline JSON. */
  function sourceOf(req: FastifyRequest, small: boolean): FileSource {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type === 'multipart/form-data') {
      const caps = publisher.capsFor(small);
      // An archive part may be as large as the whole version plus its own headers.
      const maxPartBytes = Math.max(caps.maxFileBytes, archiveLimitsOf(caps).maxArchiveBytes);
      return multipartSource(req, { maxFiles: caps.maxFiles, maxPartBytes });
    }
    if (type === 'application/json') {
      if (!inlineCheck(req.body)) throw toValidationError(inlineCheck.errors ?? [], 'body');
      return inlineSource(req.body as Static<typeof InlinePublishBody>);
    }
    (req.body as Readable | undefined)?.resume?.();
    throw new ApiError(
      'unsupported_publish_media_type',
      'Send multipart/form-data (files or an archive part) or JSON with inline files.',
      { details: { accepted: ['multipart/form-data', 'application/json'] } },
    );
  }

  app.register(async (child) => {
    // JSON and multipart keep their parsers; zip/tar bodies must come as a multipart `archive` part.
    child.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

    addRoute(child, {
      method: 'POST',
      url: '/v1/publish',
      operationId: 'publish',
      // The body (multipart or JSON) is read by the handler, so its statuses are listed here.
      problems: [400, 409, 413, 415, 422, 429],
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
              facts: { challenge: {} },
            },
          );
        }
        const small = anon || req.principal?.kind === 'space_key';
        if (small) await services.rateLimits.anonymousPublish.take(req.ip);
        const key = req.headers['idempotency-key'];
        const { answer, replayed } = await publisher.publishFiles(req.principal, {}, sourceOf(req, small), {
          clientIp: req.ip,
          idempotencyKey: Array.isArray(key) ? key[0] : key,
          present: async (outcome) => {
            const data: Record<string, unknown> = await presentReceipt(
              config.publicUrl,
              spaces,
              publishing,
              outcome,
            );
            if (outcome.claim) data.claim = outcome.claim;
            return { status: outcome.noop ? 200 : 201, body: { data } };
          },
        });
        if (replayed) reply.header('idempotent-replayed', 'true');
        return send(reply, PublishReceipt, answer.body as object, answer.status);
      },
    });
  });
}
