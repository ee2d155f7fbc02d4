import type { TSchema } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { schemaName, schemaUrl } from '../schemas/registry.ts';

/**
 * Sends a JSON body described by a named schema: `$schema` first in the body and the same URL in
 * `Link: <…>; rel="describedby"` (after a link the route set already, such as `rel="next"`).
 */
export function send(reply: FastifyReply, schema: TSchema, body: object, status = 200): FastifyReply {
  const name = schemaName(schema);
  if (!name) throw new Error('response schema must be registered with defineSchema');
  const url = schemaUrl(reply.server.services.config.publicUrl, name);
  const had = reply.getHeader('link');
  reply.header('link', had ? `${String(had)}, <${url}>; rel="describedby"` : `<${url}>; rel="describedby"`);
  reply.code(status).type('application/json; charset=utf-8');
  return reply.send({ $schema: url, ...body });
}
