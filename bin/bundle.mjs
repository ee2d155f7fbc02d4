// Bundles of our TypeScript sources as single ES modules, built with esbuild and kept in
// node_modules/.cache/<name>-<checkout>: loading the sources through tsx's loader costs 0.6–2 s per
// start (every module crosses the loader thread and is compiled); a bundle loads in a fraction.
// A bundle is rebuilt whenever a file it was made of (ours, or a package's after an install) or the
// code that builds it changed since the last build — stamps (mtime, size) of every input are checked
// before each load — so an edit to src/ takes effect on the next start and a stale bundle is never run.
// A bundle that cannot be built or loaded (no esbuild, a read-only install) falls back to the sources.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = path.resolve(import.meta.dirname, '..');

/** Bumped when what a bundle is made of changes in a way its stamps can't show. */
const FORMAT = 5;

/** `{ path: [mtimeMs, size] }` of each file, relative to the project root. */
function stamps(files) {
  const out = {};
  for (const rel of files) {
    const s = fs.statSync(path.join(ROOT, rel));
    out[rel] = [s.mtimeMs, s.size];
  }
  return out;
}

/**
 * What to stamp for a bundle's inputs: each of our files, and for a package's files its package.json
 * (an install or update rewrites it) — stat'ing every file of every package (thousands) would cost a
 * start tens of milliseconds.
 */
function stampedFiles(inputs) {
  const out = new Set();
  const roots = new Map();
  for (const rel of inputs) {
    const i = rel.lastIndexOf('node_modules/');
    if (i === -1) {
      out.add(rel);
      continue;
    }
    const parts = rel.slice(i + 'node_modules/'.length).split('/');
    const pkg =
      rel.slice(0, i) + 'node_modules/' + parts.slice(0, parts[0].startsWith('@') ? 2 : 1).join('/');
    if (!roots.has(pkg)) {
      const manifest = `${pkg}/package.json`;
      roots.set(pkg, fs.existsSync(path.join(ROOT, manifest)) ? manifest : rel);
    }
    out.add(roots.get(pkg));
  }
  return [...out];
}

/** Writes a file whole or not at all (another process may be reading or building it too). */
function writeAtomic(file, data) {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

/**
 * `import.meta.url` (and `dirname`, `filename`) of a bundled source is the bundle's own; sources that
 * find files next to themselves (worker scripts, the docs, the dashboard's build) get their original
 * location written in instead.
 */
const keepImportMetaUrl = {
  name: 'keep-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\/src\/.*\.ts$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8');
      if (!/import\.meta\.(url|dirname|filename)/.test(text)) return undefined;
      return {
        contents: text
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
          .replaceAll('import.meta.filename', JSON.stringify(args.path)),
        loader: 'ts',
      };
    });
  },
};

/**
 * A bundle of `entry`: `{ load() }` imports it (building it first when missing or stale) and returns
 * the module, or null when it cannot be had (use the sources then).
 *
 * - `name`: the bundle's file name (`<name>.mjs`); `cacheName`: its cache directory's prefix;
 * - `dir`: where to keep it (default: one per checkout under node_modules/.cache, since node_modules
 *   may be shared by several checkouts of the sources);
 * - `external`: packages that stay outside the bundle, loaded from node_modules as usual (native
 *   modules, tools);
 * - `split`: dynamic imports of the sources become chunks loaded when used (each build then gets a
 *   directory of its own).
 */
export function sourceBundle({ name, cacheName, entry, dir, external = [], split = false }) {
  const cache =
    dir ||
    path.join(
      ROOT,
      'node_modules',
      '.cache',
      `${cacheName}-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`,
    );
  const metaFile = path.join(cache, 'meta.json');
  const builders = [path.relative(ROOT, import.meta.filename)];

  /** True when the bundle was built from the sources as they are now. */
  function fresh() {
    let meta;
    try {
      meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
      if (meta.format !== FORMAT || meta.entry !== entry) return false;
      if (!fs.existsSync(path.join(cache, meta.out ?? '.', `${name}.mjs`))) return false;
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

  async function build() {
    const { build: esbuild } = await import('esbuild');
    const r = await esbuild({
      entryPoints: { [name]: entry },
      absWorkingDir: ROOT,
      bundle: true,
      platform: 'node',
      format: 'esm',
      // ES module builds first: a UMD build (jsonc-parser's `main`) requires its parts at run time by
      // relative path, which a bundle can't answer.
      mainFields: ['module', 'main'],
      target: 'node20',
      // Packages are bundled too: one module to load instead of hundreds to resolve, read and scan
      // for CommonJS exports. `external` ones (native modules, tools) load from node_modules.
      external,
      plugins: [keepImportMetaUrl],
      // Split: what the sources import dynamically (the S3 client, ACME) stays a chunk of its own,
      // loaded only when used, as with the sources.
      splitting: split,
      outdir: 'out',
      outExtension: { '.js': '.mjs' },
      chunkNames: 'chunk-[hash]',
      // Whitespace only (a fifth less CPU per start, all of it parsing); names stay for stack traces.
      minifyWhitespace: true,
      // CommonJS code in the bundle gets a real `require` for Node's built-ins and the externals.
      banner: {
        js: "import { createRequire as __spacesCreateRequire } from 'node:module'; const require = __spacesCreateRequire(import.meta.url);",
      },
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    // Stamped before anything is written: a source edited during the build leaves the bundle stale.
    // The files that build it are stamped too: a change to how the bundle is built rebuilds it.
    const inputs = stamps([...stampedFiles(Object.keys(r.metafile.inputs)), ...builders]);
    // Each build in a directory of its own, named by the meta file once complete: a process still
    // running an older build keeps loading its chunks from where they were.
    const out = split ? `b-${Date.now().toString(36)}-${process.pid}` : '.';
    fs.mkdirSync(path.join(cache, out), { recursive: true });
    for (const f of r.outputFiles) {
      writeAtomic(path.join(cache, out, path.relative(path.join(ROOT, 'out'), f.path)), f.contents);
    }
    writeAtomic(metaFile, JSON.stringify({ format: FORMAT, entry, out, inputs }));
    if (split) removeOldBuilds(out);
  }

  /**
   * Old builds (~9 MB each; one per source edit while developing): all but the 3 newest, once an
   * hour old. A process still running an older build may yet load one of its lazy chunks (the ACME
   * client when a certificate is due); one started from a build replaced more than an hour ago and
   * never restarted since is the rare case this gives up on.
   */
  function removeOldBuilds(keep) {
    const builds = fs
      .readdirSync(cache)
      .filter((d) => d.startsWith('b-') && d !== keep)
      .map((d) => {
        try {
          return { dir: path.join(cache, d), mtime: fs.statSync(path.join(cache, d)).mtimeMs };
        } catch {
          return null;
        }
      })
      .filter((b) => b !== null)
      .sort((x, y) => y.mtime - x.mtime);
    for (const b of builds.slice(2)) {
      if (Date.now() - b.mtime > 3600 * 1000) fs.rmSync(b.dir, { recursive: true, force: true });
    }
  }

  /** The entry module of the current build. */
  function entryFile() {
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
    return path.join(cache, meta.out ?? '.', `${name}.mjs`);
  }

  return {
    metaFile,
    /** Another file whose change must rebuild the bundle (the wrapper that names it). */
    stampAlso(file) {
      builders.push(path.relative(ROOT, file));
      return this;
    },
    async load() {
      if (!fresh()) {
        try {
          await build();
        } catch {
          return null;
        }
      }
      try {
        return await import(pathToFileURL(entryFile()).href);
      } catch {
        return null; // a bundle that doesn't load (damaged, or its packages out of reach): the sources
      }
    },
  };
}
