// The client CLI as one bundled ES module (its npm dependencies included), built from src/cli with
// esbuild and kept in node_modules/.cache/spaces-cli-<checkout> (see bundle.mjs). Loading the
// TypeScript sources through tsx's loader costs ~0.6 s per command; the bundle loads in a fraction.
// Rebuilt (~0.2 s) whenever a bundled file (ours, or a package's after an install) changed since the
// last build, so edits to src/ take effect on the next command. SPACES_CLI_BUNDLE=0 runs the sources
// through tsx instead; SPACES_CLI_BUNDLE_DIR puts the bundle elsewhere (tests use their own).
import { sourceBundle } from './bundle.mjs';

const cli = sourceBundle({
  name: 'cli',
  cacheName: 'spaces-cli',
  entry: 'src/cli/main.ts',
  dir: process.env.SPACES_CLI_BUNDLE_DIR,
}).stampAlso(import.meta.filename);

/** The bundled CLI module (`runCli`), or null when it cannot be built here (then use the sources). */
export async function loadCliBundle() {
  if (process.env.SPACES_CLI_BUNDLE === '0') return null;
  return cli.load();
}
