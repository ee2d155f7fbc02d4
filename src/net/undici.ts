import { createRequire } from 'node:module';

type Undici = typeof import('undici');
let loaded: Undici | null = null;

/**
 * undici, loaded on first use: the outbound requests (proxy rewrites, webhook deliveries) are rare,
 * and loading it at start was about a fifth of the server bundle to compile and evaluate (~60 ms of
 * a cold start on a small machine). Node's own ESM/CommonJS loader returns the same module instance
 * as `import 'undici'` elsewhere, so its error classes compare equal.
 */
export function undici(): Undici {
  loaded ??= createRequire(import.meta.url)('undici') as Undici;
  return loaded;
}
