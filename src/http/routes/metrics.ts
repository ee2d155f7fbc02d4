import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bearerToken } from '../../domain/auth/credentials.ts';
import { hashToken, sameDigest } from '../../domain/auth/tokens.ts';
import { fail } from '../../errors/problem.ts';
import { addRoute } from '../route.ts';

/**
 * `GET /metrics`: the process's operational metrics in the Prometheus text format (see src/metrics.ts:
 * memory, event-loop delay, the edge's cache bytes against their bounds, the change feed's lag, the job
 * queue). With `SPACES_METRICS_TOKEN` a scraper sends it as a bearer token from anywhere; without it
 * only a loopback client that came straight to this process (no forwarding header: a balancer on the
 * same machine forwards the world) may read them.
 */
export function metricsRoutes(app: FastifyInstance): void {
  const { config, metrics } = app.services;
  const tokenDigest = config.metricsToken ? hashToken(config.metricsToken) : null;

  addRoute(app, {
    method: 'GET',
    url: '/metrics',
    operationId: 'metrics',
    summary: 'Operational metrics (Prometheus text format)',
    description:
      'Memory, event-loop delay, edge cache sizes and bounds, change-feed lag between instances, and job counts. Readable with `Authorization: Bearer <SPACES_METRICS_TOKEN>`, or without a token from loopback only.',
    tags: ['Operations'],
    auth: null,
    responses: { 200: 'Metrics in the Prometheus text exposition format 0.0.4' },
    // With SPACES_METRICS_TOKEN set, the scraper's bearer is checked here (not through `auth`).
    problems: [401],
    handler: async (req, reply) => {
      const token = bearerToken(req.headers.authorization);
      if (token !== null || tokenDigest !== null) {
        if (token === null) {
          fail('unauthorized', 'Metrics need Authorization: Bearer <SPACES_METRICS_TOKEN>.', {
            facts: { challenge: {} },
          });
        }
        if (tokenDigest === null || !sameDigest(hashToken(token), tokenDigest)) {
          fail('unauthorized', 'The bearer token is not this server’s metrics token.', {
            facts: { challenge: { error: 'invalid_token' } },
          });
        }
      } else if (!directFromLoopback(req)) {
        fail(
          'forbidden',
          'Metrics are readable from this machine only; set SPACES_METRICS_TOKEN to scrape them from elsewhere.',
        );
      }
      return reply
        .type('text/plain; version=0.0.4; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(await metrics.render());
    },
  });
}

function directFromLoopback(req: FastifyRequest): boolean {
  const h = req.headers;
  if (h['x-forwarded-for'] !== undefined || h.forwarded !== undefined || h['x-real-ip'] !== undefined)
    return false;
  const addr = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  if (isIP(addr) === 4) return addr.startsWith('127.');
  return addr === '::1';
}
