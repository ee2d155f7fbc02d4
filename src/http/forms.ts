import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/problem.ts';

/** One part of a `multipart/form-data` body, as every route reads it. */
export type FormPart =
  | { type: 'field'; fieldname: string; value: unknown }
  | {
      type: 'file';
      fieldname: string;
      filename: string;
      /** The part's bytes; a malformed or cut-off body fails the iteration with a 400 problem. */
      bytes: AsyncIterable<Buffer>;
      /** Reads and drops the bytes (a part the route refuses). */
      skip(): void;
    };

/** RFC 2046 §5.1.1: a boundary is 1..70 characters, quoted or not. */
const BOUNDARY = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))\s*(?:;|$)/i;

function malformed(err: unknown): ApiError {
  return new ApiError(
    'invalid_request',
    `The multipart/form-data body could not be read: ${(err as Error).message ?? String(err)}.`,
  );
}

/** A parse failure is the client's (400); Fastify's own multipart errors (limits) keep their codes. */
function asClientError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('FST_')) return err;
  return malformed(err);
}

async function* clientBytes(file: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of file) yield chunk;
  } catch (err) {
    throw asClientError(err);
  }
}

/**
 * The parts of a `multipart/form-data` body: the one way routes read multipart. A body the parser
 * can't read — no boundary, a malformed part, a file cut off, a client that went away mid-body — is a
 * 400 `invalid_request` (an OAuth endpoint renders it as RFC 6749 `invalid_request`), never an error
 * event or a 500; a body that stops between parts is not taken for a complete one.
 */
export async function* formParts(
  request: FastifyRequest,
  options?: Parameters<FastifyRequest['parts']>[0],
): AsyncGenerator<FormPart> {
  if (!BOUNDARY.test(request.headers['content-type'] ?? '')) {
    throw new ApiError(
      'invalid_request',
      'A multipart/form-data body needs a boundary parameter in its Content-Type (1 to 70 characters).',
      { details: { header: 'Content-Type' } },
    );
  }
  let parts: AsyncIterableIterator<import('@fastify/multipart').Multipart>;
  try {
    parts = request.parts(options);
  } catch (err) {
    throw asClientError(err);
  }
  const iterator = parts[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<import('@fastify/multipart').Multipart>;
    try {
      next = await iterator.next();
    } catch (err) {
      throw asClientError(err);
    }
    if (next.done) break;
    const part = next.value;
    if (part.type === 'field') {
      yield { type: 'field', fieldname: part.fieldname, value: part.value };
      continue;
    }
    const file = part.file;
    // Errors of a part nobody reads any more (the route failed first) must not go unheard.
    file.on('error', () => {});
    yield {
      type: 'file',
      fieldname: part.fieldname,
      filename: part.filename,
      bytes: clientBytes(file),
      skip: () => file.resume(),
    };
  }
  if (request.raw.aborted || !request.raw.complete) {
    throw malformed(new Error('the body ended before its closing boundary'));
  }
}

/**
 * Turns an `application/x-www-form-urlencoded` or `multipart/form-data` body into the same object a
 * JSON body would be, so one schema validates all three. Fields named in `jsonFields` carry nested
 * objects as JSON strings (`config={"cleanUrls":true}`); a repeated field becomes an array.
 */
export async function decodeFormBody(request: FastifyRequest, jsonFields: readonly string[]): Promise<void> {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  let fields: Record<string, unknown>;
  if (type === 'application/x-www-form-urlencoded') {
    fields = { ...((request.body as Record<string, unknown>) ?? {}) };
  } else if (type === 'multipart/form-data') {
    fields = {};
    for await (const part of formParts(request)) {
      if (part.type === 'file') {
        part.skip();
        throw new ApiError(
          'invalid_request',
          `This endpoint takes form fields only; "${part.fieldname}" is a file.`,
          {
            pointer: `/${part.fieldname}`,
          },
        );
      }
      const prev = fields[part.fieldname];
      fields[part.fieldname] =
        prev === undefined ? part.value : Array.isArray(prev) ? [...prev, part.value] : [prev, part.value];
    }
  } else {
    return;
  }
  for (const name of jsonFields) {
    const raw = fields[name];
    if (typeof raw !== 'string') continue;
    try {
      fields[name] = JSON.parse(raw);
    } catch {
      throw new ApiError('validation_error', `The form field "${name}" must hold JSON.`, {
        pointer: `/${name}`,
      });
    }
  }
  request.body = fields;
}
