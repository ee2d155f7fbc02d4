import { performance } from 'node:perf_hooks';
import type { CronDispatch, CronDispatcher } from '../domain/crons/service.ts';
import type { Services } from '../services.ts';
import { CRON_HEADER, platformRequestHeaders } from './platform-requests.ts';

/** Longer than a function's own 30 s limit: the edge answers 504 before this gives up. */
const TIMEOUT_MS = 45_000;
/** Bytes of a failed answer's body kept in the failure message. */
const BODY_SAMPLE = 300;

/**
 * Sends a cron's request through this server's own site edge, as behaviour §4.8 says: `GET <path>`
 * on the space's live hostname through normal routing (static files, redirects, rewrites, functions),
 * `x-service-cron: <key>` on scheduled runs (a manual run omits it), and `authorization: Bearer
 * <CRON_SECRET>` when the space has that variable. It goes to the local listener with the platform
 * header (platform-requests.ts), so a private site's crons pass its access control.
 */
export function cronDispatcher(services: Services, local: { host: string; port: number }): CronDispatcher {
  return async (space, cron, trigger): Promise<CronDispatch> => {
    const { request } = await import('undici');
    const host = new URL(services.spaces.liveUrlOf(space)).host;
    const env = await services.variables.forRuntime(space.id);
    const headers: Record<string, string> = {
      host,
      'user-agent': 'Spaces-Cron/1.0',
      ...platformRequestHeaders(),
      ...(trigger === 'schedule' ? { [CRON_HEADER]: cron.key } : {}),
      ...(env.CRON_SECRET ? { authorization: `Bearer ${env.CRON_SECRET}` } : {}),
    };
    const started = performance.now();
    try {
      const res = await request(`http://${local.host}:${local.port}${cron.path}`, {
        method: 'GET',
        headers,
        headersTimeout: TIMEOUT_MS,
        bodyTimeout: TIMEOUT_MS,
      });
      res.body.on('error', () => {}); // destroyed below: not an error of the run
      let sample = '';
      if (res.statusCode >= 400) {
        for await (const chunk of res.body) {
          sample += Buffer.from(chunk as Uint8Array).toString('utf8');
          if (sample.length >= BODY_SAMPLE) break;
        }
      }
      res.body.destroy();
      const ms = performance.now() - started;
      if (res.statusCode < 400) return { status: res.statusCode, ms, failure: null };
      const text = sample.slice(0, BODY_SAMPLE).replace(/\s+/g, ' ').trim();
      return {
        status: res.statusCode,
        ms,
        failure: `GET ${cron.path} answered ${res.statusCode}${text ? `: ${text}` : ''}`,
      };
    } catch (err) {
      return {
        status: null,
        ms: performance.now() - started,
        failure: `GET ${cron.path} got no answer: ${(err as Error).message}`,
      };
    }
  };
}
