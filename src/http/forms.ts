import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/problem.ts';

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
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        part.file.resume();
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
