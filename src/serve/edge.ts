import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Services } from '../services.ts';

/** Answers requests for site hostnames. Unknown hosts get a plain 404 page, never the API's JSON. */
export function createSiteHandler(_services: Services) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    const body =
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head><body><h1>No site here</h1><p>This address does not belong to any space.</p></body></html>';
    res.writeHead(404, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    });
    res.end(body);
  };
}
