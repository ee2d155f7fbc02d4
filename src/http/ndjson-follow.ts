import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** How often a followed log is polled for new lines. */
export const FOLLOW_POLL_MS = 2_000;
const BATCH = 500;

/**
 * Streams a log as NDJSON (`follow=true` on the access and runtime logs): lines newer than `after`
 * in id order, polled every {@link FOLLOW_POLL_MS} until the client goes. Streams never end on their
 * own: closing the server ends every one (registered per Fastify instance).
 */
export function ndjsonFollower(app: FastifyInstance) {
  const followers = new Set<ServerResponse>();
  app.addHook('preClose', async () => {
    for (const res of followers) res.destroy();
  });
  return <R extends { id: string }>(
    reply: FastifyReply,
    after: string,
    newer: (after: string, n: number) => Promise<R[]>,
    present: (row: R) => unknown,
  ): FastifyReply => {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    res.flushHeaders();
    followers.add(res);
    let stopped = false;
    const poll = async () => {
      while (!stopped) {
        const lines = await newer(after, BATCH);
        for (const l of lines) res.write(`${JSON.stringify(present(l))}\n`);
        if (lines.length) after = lines[lines.length - 1]!.id;
        if (lines.length < BATCH) await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
      }
    };
    res.on('close', () => {
      stopped = true;
      followers.delete(res);
    });
    poll().catch(() => res.destroy());
    return reply;
  };
}
