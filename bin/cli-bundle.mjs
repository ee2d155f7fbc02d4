// The client CLI as one bundled ES module (its npm dependencies included), built from src/cli with
// esbuild and kept in node_modules/.cache/spaces-cli-<checkout>. Loading the TypeScript sources
// through tsx's loader costs ~0.6 s per command (every module crosses the loader thread); the bundle
// loads in a fraction of that.
// Rebuilt (~0.2 s) whenever a bundled file (ours, or a package's after an install) changed since the
// last build, so edits to src/ take effect on the next command. SPACES_CLI_BUNDLE=0 runs the sources
// through tsx instead; SPACES_CLI_BUNDLE_DIR puts the bundle elsewhere (tests use their own).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
const ENTRY = 'src/cli/main.ts';
// One bundle per checkout: node_modules may be shared (a symlink) by several checkouts of the sources.
const CACHE =
  process.env.SPACES_CLI_BUNDLE_DIR ||
  path.join(
    ROOT,
    'node_modules',
    '.cache',
    `spaces-cli-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`,
  );
const BUNDLE = path.join(CACHE, 'cli.mjs');
const META = path.join(CACHE, 'meta.json');

/** Bumped when what a bundle is made of changes in a way its stamps can't show. */
const FORMAT = 4;

/** `{ path: [mtimeMs, size] }` of each file, relative to the project root. */
function stamps(files) {
  const out = {};
  for (const rel of files) {
    const s = fs.statSync(path.join(ROOT, rel));
    out[rel] = [s.mtimeMs, s.size];
  }
  return out;
}

/** True when the bundle was built from the sources as they are now. */
function fresh() {
  let meta;
  try {
    meta = JSON.parse(fs.readFileSync(META, 'utf8'));
    if (meta.format !== FORMAT || !fs.existsSync(BUNDLE)) return false;
  } catch {
    return false;
  }
  try {
    const now = stamps(Object.keys(meta.inputs));
    return Object.entries(meta.inputs).every(([rel, [m, s]]) => now[rel][0] === m && now[rel][1] === s);
  } catch {
    return false; // a source was removed or renamed
  }
}

/** Writes a file whole or not at all (another command may be reading or building it too). */
function writeAtomic(file, data) {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

async function build() {
  const { build: esbuild } = await import('esbuild');
  const r = await esbuild({
    entryPoints: [ENTRY],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    // ES module builds first: a UMD build (jsonc-parser's `main`) requires its parts at run time by
    // relative path, which a bundle can't answer.
    mainFields: ['module', 'main'],
    target: 'node20',
    // Dependencies are bundled too: one module to load instead of ~30 packages to resolve and load
    // (~25 ms a command). The CommonJS ones among them get a real `require` for Node's built-ins.
    banner: {
      js: "import { createRequire as __spacesCreateRequire } from 'node:module'; const require = __spacesCreateRequire(import.meta.url);",
    },
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  // Stamped before anything is written: a source edited during the build leaves the bundle stale.
  // This file is stamped too: a change to how the bundle is built rebuilds it.
  const inputs = stamps([...Object.keys(r.metafile.inputs), path.relative(ROOT, import.meta.filename)]);
  fs.mkdirSync(CACHE, { recursive: true });
  writeAtomic(BUNDLE, r.outputFiles[0].contents);
  writeAtomic(META, JSON.stringify({ format: FORMAT, entry: ENTRY, inputs }));
}

/** The bundled CLI module (`runCli`), or null when it cannot be built here (then use the sources). */
export async function loadCliBundle() {
  if (process.env.SPACES_CLI_BUNDLE === '0') return null;
  if (!fresh()) {
    try {
      await build();
    } catch {
      return null; // no esbuild, or a read-only install: the sources still work
    }
  }
  try {
    return await import(pathToFileURL(BUNDLE).href);
  } catch {
    return null; // a bundle that doesn't load (damaged, or its packages out of reach): the sources
  }
}
