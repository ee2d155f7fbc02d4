import { builtinModules } from 'node:module';
import { posix } from 'node:path';
import type { Loader, Plugin } from 'esbuild';
import type { CompileDiagnostic } from '../../site/types.ts';
import type { DetectedEntry } from './detect.ts';
import { MODULE_EXTENSIONS } from './detect.ts';

/** Behaviour §18: a functions bundle is at most 8 MiB. */
export const MAX_BUNDLE_BYTES = 8 * 1024 * 1024;

/** What a version's file looks like to the bundler: its bytes on demand. */
export interface SourceFiles {
  has(path: string): boolean;
  read(path: string): Promise<Buffer>;
}

export interface Bundle {
  code: Buffer;
  /** Every version file the bundle read (kept private: never served as a static file). */
  inputs: string[];
}

const LOADERS: Record<string, Loader> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.tsx': 'tsx',
  '.jsx': 'jsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.json': 'json',
  '.txt': 'text',
  '.html': 'text',
  '.wasm': 'binary',
};
const BUILTINS = new Set(builtinModules);
/** Modules workerd provides that a worker may import (nothing that opens sockets or files). */
const RUNTIME_MODULES = new Set(['cloudflare:workers']);

/**
 * The generated entry: the single module's default export, or a router over route modules
 * (Pages-Functions style: `onRequest` / `onRequestGet`… with a context, or a `{ fetch }` default),
 * each request passing through the `_middleware` modules of the folders above its route, outermost
 * first. A middleware's `onRequest` (a function or an array of them) gets the same context; its
 * `next()` runs the rest of the chain (`next(request)` or `next(url, init)` replaces the request).
 */
export function entrySource(e: DetectedEntry): string {
  if (e.module !== null) return `export { default } from ${JSON.stringify(`./${e.module}`)};\n`;
  const imports = e.modules.map((m, i) => `import * as m${i} from ${JSON.stringify(`./${m.path}`)};`);
  const mwImports = e.middleware.map((m, i) => `import * as w${i} from ${JSON.stringify(`./${m.path}`)};`);
  const table = e.modules.map((m, i) => `  [${JSON.stringify(m.route)}, m${i}],`);
  const mwTable = e.middleware.map((m, i) => `  [${JSON.stringify(m.route)}, w${i}],`);
  return `${imports.join('\n')}
${mwImports.join('\n')}
const routes = [
${table.join('\n')}
].map(([route, mod]) => [route.split('/').filter(Boolean), mod, route]);
const middleware = [
${mwTable.join('\n')}
].map(([prefix, mod]) => [prefix.split('/').filter(Boolean), mod]);
function match(pattern, segs) {
  const params = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p === '*') { params.catchall = segs.slice(i); return params; }
    if (i >= segs.length) return null;
    if (p.startsWith(':')) params[p.slice(1)] = segs[i];
    else if (p !== segs[i]) return null;
  }
  return pattern.length === segs.length ? params : null;
}
const METHOD = { GET: 'Get', HEAD: 'Head', POST: 'Post', PUT: 'Put', PATCH: 'Patch', DELETE: 'Delete', OPTIONS: 'Options' };
const handlersOf = (mod, method) => {
  const h = mod['onRequest' + (METHOD[method] ?? '')] ?? mod.onRequest;
  return h === undefined ? [] : Array.isArray(h) ? h : [h];
};
const under = (prefix, segs) => prefix.length <= segs.length && prefix.every((p, i) => p === segs[i]);
async function route(request, env, ctx, data) {
  const segs = new URL(request.url).pathname.split('/').filter(Boolean).map((s) => { try { return decodeURIComponent(s); } catch { return s; } });
  let found = null;
  for (const [pattern, mod, path] of routes) {
    const params = match(pattern, segs);
    if (params) { found = { mod, path, params }; break; }
  }
  const chain = [];
  for (const [prefix, mod] of middleware) if (under(prefix, segs)) for (const h of handlersOf(mod, request.method)) chain.push(h);
  const params = found ? found.params : {};
  const functionPath = found ? found.path : '';
  const last = async (req) => {
    if (!found) return new Response('Not Found', { status: 404 });
    const hs = handlersOf(found.mod, req.method);
    const context = { request: req, env, params, data, functionPath, waitUntil: (p) => ctx.waitUntil(p),
      passThroughOnException() {}, next: () => new Response('Not Found', { status: 404 }) };
    if (hs.length) return hs[0](context);
    if (found.mod.default && typeof found.mod.default.fetch === 'function') return found.mod.default.fetch(req, env, ctx);
    return new Response('Method Not Allowed', { status: 405 });
  };
  const step = (i, req) => {
    if (i >= chain.length) return last(req);
    const next = (input, init) => step(i + 1, input === undefined ? req : new Request(input, init));
    return chain[i]({ request: req, env, params, data, functionPath, waitUntil: (p) => ctx.waitUntil(p),
      passThroughOnException() {}, next });
  };
  return step(0, request);
}
export default {
  fetch(request, env, ctx) {
    return route(request, env, ctx, {});
  },
};
`;
}

/** `./x` from `dir` inside the version: the normalised path, or null when it leaves the version. */
function inside(dir: string, spec: string): string | null {
  const p = posix.normalize(posix.join(dir, spec));
  if (p.startsWith('..') || p.startsWith('/') || p === '.') return null;
  return p;
}

/**
 * Bundles the version's worker into ONE ES module with esbuild, reading every file from the version
 * (never the disk): relative imports only, none leaving the version, no Node built-ins, no other
 * packages. A non-literal `import()` can't be bundled and is refused. Problems are diagnostics.
 */
export async function bundleWorker(
  entry: DetectedEntry,
  files: SourceFiles,
  diagnostics: CompileDiagnostic[],
): Promise<Bundle | null> {
  const { build } = await import('esbuild');
  const problems: CompileDiagnostic[] = [];
  const refuse = (code: string, message: string, path: string | null) => {
    problems.push({ code, severity: 'error', message, path });
    return { errors: [{ text: message }] };
  };
  const plugin: Plugin = {
    name: 'spaces-version',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return { path: 'entry', namespace: 'spaces' };
        const importer = args.namespace === 'version' ? args.importer : null;
        const spec = args.path;
        if (RUNTIME_MODULES.has(spec)) return { path: spec, external: true };
        if (spec.startsWith('node:') || BUILTINS.has(spec) || BUILTINS.has(spec.split('/')[0]!)) {
          return refuse(
            'runtime_node_builtin_unsupported',
            `${importer ?? entry.entry} imports "${spec}": workers have Web APIs only, no Node built-ins.`,
            importer,
          );
        }
        if (!spec.startsWith('./') && !spec.startsWith('../')) {
          return refuse(
            'runtime_module_not_found',
            `${importer ?? entry.entry} imports "${spec}": only relative imports of the version's own files are bundled (bundle packages into your output first).`,
            importer,
          );
        }
        const base = inside(importer === null ? '' : posix.dirname(importer), spec);
        if (base === null) {
          return refuse(
            'runtime_import_outside_version',
            `${importer} imports "${spec}", which leaves the version.`,
            importer,
          );
        }
        for (const candidate of [
          base,
          ...MODULE_EXTENSIONS.map((e) => base + e),
          ...MODULE_EXTENSIONS.map((e) => `${base}/index${e}`),
        ]) {
          if (files.has(candidate)) return { path: candidate, namespace: 'version' };
        }
        return refuse(
          'runtime_module_not_found',
          `${importer ?? entry.entry} imports "${spec}", which is not in the version.`,
          importer,
        );
      });
      b.onLoad({ filter: /.*/, namespace: 'spaces' }, () => ({ contents: entrySource(entry), loader: 'js' }));
      b.onLoad({ filter: /.*/, namespace: 'version' }, async (args) => {
        const ext = posix.extname(args.path);
        const loader = LOADERS[ext] ?? 'text';
        return { contents: await files.read(args.path), loader };
      });
    },
  };
  let out: Awaited<ReturnType<typeof build>>;
  try {
    out = await build({
      entryPoints: ['entry'],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      conditions: ['workerd', 'worker', 'browser'],
      outfile: 'worker.mjs',
      metafile: true,
      logLevel: 'silent',
      legalComments: 'none',
      plugins: [plugin],
    });
  } catch (err) {
    if (problems.length) diagnostics.push(...problems);
    else {
      const errors =
        (err as { errors?: Array<{ text: string; location?: { file: string; line: number } | null }> })
          .errors ?? [];
      for (const e of errors.slice(0, 20)) {
        const file = e.location?.file.replace(/^version:/, '') ?? null;
        diagnostics.push({
          code: 'runtime_bundle_failed',
          severity: 'error',
          message: e.text,
          path: file && e.location ? `${file}:${e.location.line}` : file,
        });
      }
      if (!errors.length)
        diagnostics.push({
          code: 'runtime_bundle_failed',
          severity: 'error',
          message: String(err),
          path: null,
        });
    }
    return null;
  }
  const code = Buffer.from(out.outputFiles![0]!.contents);
  if (code.length > MAX_BUNDLE_BYTES) {
    diagnostics.push({
      code: 'runtime_bundle_too_large',
      severity: 'error',
      message: `The functions bundle is ${code.length} bytes; the limit is ${MAX_BUNDLE_BYTES} (8 MiB).`,
      path: entry.entry,
      details: { size: code.length, limit: MAX_BUNDLE_BYTES },
    });
    return null;
  }
  // esbuild rewrites every literal `import("./x")` into the bundle; one left in the output takes a
  // computed specifier, which workerd refuses at run time ("dynamic module specifiers are unsupported").
  const text = code.toString('utf8');
  const dynamic = /(?<![\w$.])import\s*\(\s*(?!["'`])/.exec(text);
  if (dynamic) {
    const line = text.slice(0, dynamic.index).split('\n').length;
    diagnostics.push({
      code: 'runtime_dynamic_import_unsupported',
      severity: 'error',
      message: `The worker calls import() with a computed specifier (bundle line ${line}); only literal specifiers can be bundled.`,
      path: entry.entry,
      details: { bundleLine: line },
    });
    return null;
  }
  const inputs = Object.keys(out.metafile!.inputs)
    .filter((k) => k.startsWith('version:'))
    .map((k) => k.slice('version:'.length));
  return { code, inputs };
}
