import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Services } from '../services.ts';
import { sendSystemPage } from './pages.ts';

/**
 * The edge's answer to a request that failed: logged (a header node:http refused is logged once per
 * host and message), then a 500 page, or the socket ended when the headers were already sent.
 */
export function answerFailure(
  log: Services['log'],
  refusedHeaders: Set<string>,
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
): void {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') {
    // node:http refused to write a header outside the field grammar (see field.ts): it stays unwritten
    // and the visitor gets a 500, as from the fast lane, which declines such an answer.
    const key = `${req.headers.host}|${(err as Error).message}`;
    if (!refusedHeaders.has(key)) {
      if (refusedHeaders.size >= 1024) refusedHeaders.clear();
      refusedHeaders.add(key);
      log.error({ err, host: req.headers.host, url: req.url }, 'response header refused: not valid HTTP');
    }
  } else log.error({ err, host: req.headers.host, url: req.url }, 'site request failed');
  if (!res.headersSent) sendSystemPage(req, res, { kind: 'error' });
  else res.destroy();
}
