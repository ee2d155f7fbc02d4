import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Services } from '../services.ts';
import { sendSystemPage } from './pages.ts';

/** Answers requests for site hostnames. Unknown hosts get the designed 404 page, never the API's JSON. */
export function createSiteHandler(_services: Services) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    sendSystemPage(req, res, { kind: 'unknown-host' });
  };
}
