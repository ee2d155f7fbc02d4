import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import { catalog, type ErrorCode, titleOf } from '../errors/catalog.ts';
import { ApiError } from '../errors/problem.ts';
import { schemaUrl } from '../schemas/registry.ts';
import { type HttpPart, toValidationError } from '../schemas/validation.ts';

export function problemType(publicUrl: string, code: string): string {
  return `${publicUrl}/docs/errors/${code}`;
}

/** The HTTP status of a coded error: the catalog's, the one place that maps codes to statuses. */
export function httpStatusOf(err: ApiError): number {
  return catalog[err.code].status;
}

const REALM = 'Bearer realm="spaces"';

/** The response headers an error's facts stand for (`Retry-After`, `WWW-Authenticate`, `ETag`). */
export function problemHeaders(err: ApiError): Record<string, string> {
  const facts = err.facts;
  const headers: Record<string, string> = {};
  if (facts.retryAfterSeconds !== undefined) headers['retry-after'] = String(facts.retryAfterSeconds);
  if (facts.challenge) {
    let value = REALM;
    if (facts.challenge.error) value += `, error="${facts.challenge.error}"`;
    if (facts.challenge.scope) value += `, scope="${facts.challenge.scope}"`;
    headers['www-authenticate'] = value;
  }
  if (facts.currentRevision !== undefined) headers.etag = `"${facts.currentRevision}"`;
  return headers;
}

/**
 * Renders an ApiError as the spec's problem document, on any reply. `headers` adds what only the HTTP
 * layer knows (e.g. `Allow` on a 405).
 */
export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  err: ApiError,
  headers: Record<string, string> = {},
): FastifyReply {
  const { publicUrl } = request.server.services.config;
  const info = catalog[err.code];
  const status = httpStatusOf(err);
  const body: Record<string, unknown> = {
    $schema: schemaUrl(publicUrl, 'Problem'),
    type: problemType(publicUrl, err.code),
    title: titleOf(err.code),
    status,
    detail: err.detail,
    code: err.code,
  };
  if (err.extras.pointer !== undefined) body.pointer = err.extras.pointer;
  if (err.extras.details) body.details = err.extras.details;
  const suggestions = err.extras.suggestions ?? info.suggestions;
  if (suggestions?.length) body.suggestions = suggestions;
  const next = err.extras.next ?? info.next;
  if (next?.length) body.next = next;
  body.requestId = request.id;
  for (const [k, v] of Object.entries({ ...problemHeaders(err), ...headers })) reply.header(k, v);
  reply.header('link', `<${schemaUrl(publicUrl, 'Problem')}>; rel="describedby"`);
  reply.header('cache-control', 'no-store');
  return reply.code(status).type('application/problem+json; charset=utf-8').send(body);
}

/** Maps Fastify's own errors (parsing, limits, validation) to catalog codes. */
function fromFastifyError(err: FastifyError & { validationContext?: string }): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err.validation)
    return toValidationError(err.validation as never, (err.validationContext ?? 'body') as HttpPart);
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        'unsupported_media_type',
        'This endpoint does not read bodies of that Content-Type.',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new ApiError('payload_too_large', 'The request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'The body is empty but Content-Type says JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'The Content-Length header does not match the body.');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new ApiError('unsupported_media_type', 'Expected a multipart/form-data body.');
  }
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new ApiError('invalid_request', 'The body is not valid JSON.');
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    if (err.statusCode === 413) return new ApiError('payload_too_large', 'The request body is too large.');
    if (err.statusCode === 415) return new ApiError('unsupported_media_type', 'Unsupported Content-Type.');
    return new ApiError('invalid_request', 'The request could not be read.');
  }
  return null;
}

/** Connection-level failures: a dependency (database, S3 bucket) that could not be reached or hung up. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
]);

/**
 * A failure to reach something the server depends on (its S3 bucket refusing connections, a database
 * that went away): 503 `service_unavailable`, which says "retry later", not a 500 that says "bug".
 * The AWS SDK marks what it got from the wire with `$metadata`; a 5xx from S3 counts too.
 */
function fromDependencyError(err: Error & { code?: unknown; $metadata?: { httpStatusCode?: number } }) {
  const status = err.$metadata?.httpStatusCode;
  if (
    (typeof err.code === 'string' && UNREACHABLE.has(err.code)) ||
    (err.$metadata && (status === undefined || status >= 500))
  ) {
    return new ApiError(
      'service_unavailable',
      'A service the server depends on (its database or blob store) did not answer; retry shortly.',
      { facts: { retryAfterSeconds: 5 } },
    );
  }
  return null;
}

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * Problem documents for every failure: thrown ApiErrors, Fastify's parse/validation errors, unknown
 * routes (404) and known paths hit with the wrong method (405 + Allow). Anything else is a 500 whose
 * internals go to the log, never to the client.
 */
export function installErrorHandling(app: FastifyInstance): void {
  const router = FindMyWay();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      try {
        router.on(m as 'GET', route.url, () => {});
      } catch {
        // The same method+path registered twice (HEAD shadows); nothing to record.
      }
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const mapped = fromFastifyError(error) ?? fromDependencyError(error);
    if (mapped) {
      if (httpStatusOf(mapped) >= 500) request.log.error({ err: error }, 'request failed');
      return sendProblem(request, reply, mapped);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(
      request,
      reply,
      new ApiError(
        'internal_error',
        `Something went wrong on our side. Quote request ${request.id} when reporting it.`,
      ),
    );
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = ALL_METHODS.filter((m) => router.find(m, path));
    if (allowed.length > 0) {
      const allow = allowed.includes('GET') && !allowed.includes('HEAD') ? [...allowed, 'HEAD'] : allowed;
      return sendProblem(
        request,
        reply,
        new ApiError(
          'method_not_allowed',
          `${request.method} is not allowed on ${path}. Allowed: ${allow.join(', ')}.`,
          { details: { allowed: allow } },
        ),
        { allow: allow.join(', ') },
      );
    }
    return sendProblem(request, reply, new ApiError('not_found', `Nothing exists at ${path}.`));
  });
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(catalog, code);
}

/** How long a refused connection is read and discarded before it is closed. */
const LINGER_MS = 2000;

/**
 * What Node's HTTP parser refuses before there is a request (a head too large, bytes that are no
 * HTTP, a head or body too slow) is still answered with a problem document, then the connection
 * closes: no client ever sees a body of another shape.
 */
export function clientErrorResponder(
  publicUrl: () => string,
  newRequestId: () => string,
): (err: NodeJS.ErrnoException, socket: import('node:stream').Duplex) => void {
  /** Sockets already answered: the parser reports every later chunk of them again. */
  const answered = new WeakSet<object>();
  return (err, socket) => {
    if (answered.has(socket)) return;
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    let problem: ApiError;
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      problem = new ApiError(
        'request_header_fields_too_large',
        'The request line and headers are larger than this server reads.',
      );
    } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      problem = new ApiError('request_timeout', 'The request did not arrive in time.');
    } else {
      problem = new ApiError('invalid_request', 'The request is not valid HTTP/1.1.');
    }
    const status = httpStatusOf(problem);
    const base = publicUrl();
    const body = JSON.stringify({
      $schema: schemaUrl(base, 'Problem'),
      type: problemType(base, problem.code),
      title: titleOf(problem.code),
      status,
      detail: problem.detail,
      code: problem.code,
      requestId: newRequestId(),
    });
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    // A lingering close (as nginx does): answer, half-close, and read what the client is still
    // sending for a moment, so its unread bytes don't turn our answer into a reset on its side.
    socket.end(
      `HTTP/1.1 ${status} ${titleOf(problem.code)}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
    socket.on('error', () => socket.destroy());
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
