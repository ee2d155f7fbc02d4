// The server (`spaces server`, `spaces admin`) as a bundled ES module of our sources and their npm
// packages (native ones stay in node_modules), with chunks for what is imported lazily. Built with esbuild
// into node_modules/.cache/spaces-server-<checkout> on first start and rebuilt whenever one of its
// sources changed (see bundle.mjs): a start then skips compiling ~250 TypeScript modules through tsx
// (~2 s on a small machine). SPACES_SERVER_BUNDLE=0 runs the sources through tsx instead (as the
// tests do in-process); SPACES_SERVER_BUNDLE_DIR puts the bundle elsewhere.
import { sourceBundle } from './bundle.mjs';

const server = sourceBundle({
  name: 'server',
  cacheName: 'spaces-server',
  entry: 'src/main.ts',
  dir: process.env.SPACES_SERVER_BUNDLE_DIR,
  // Native (better-sqlite3, Argon2), or tools the server runs rather than imports (esbuild, tsx, workerd).
  external: ['better-sqlite3', '@node-rs/argon2', 'esbuild', 'tsx', 'workerd'],
  split: true,
}).stampAlso(import.meta.filename);

/** The bundled `src/main.ts` (`main`), or null when it cannot be built or loaded here. */
export async function loadServerBundle() {
  if (process.env.SPACES_SERVER_BUNDLE === '0') return null;
  return server.load();
}
