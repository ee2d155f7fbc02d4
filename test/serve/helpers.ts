import { type CompileInput, compileSite } from '../../src/serve/compile.ts';
import { normalisePath } from '../../src/serve/path.ts';
import { type Decision, manifestLookup, type RouteRequest, route } from '../../src/serve/rules.ts';
import type { ManifestEntry } from '../../src/serve/types.ts';

export function entries(paths: string[]): ManifestEntry[] {
  return paths.map((path) => ({
    path,
    sha256: `sha-${path}`,
    size: 1,
    contentType: path.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/octet-stream',
  }));
}

export interface Site {
  go(url: string, extra?: Partial<RouteRequest>): Decision;
  /** Short form: `file:<path> <status>`, `redirect:<status> <location>`, `404:<path|none>`, … */
  summary(url: string, extra?: Partial<RouteRequest>): string;
}

export function site(paths: string[], input: Omit<CompileInput, 'files'> = {}): Site {
  const files = entries(paths);
  const compiled = compileSite({ ...input, files });
  if (!compiled.ok) {
    throw new Error(`site does not compile: ${JSON.stringify(compiled.diagnostics)}`);
  }
  // The rules survive a JSON round trip: they are stored and cached as JSON.
  const rules = JSON.parse(JSON.stringify(compiled.rules));
  const lookup = manifestLookup(files);
  const go = (url: string, extra: Partial<RouteRequest> = {}): Decision => {
    const u = new URL(url, 'http://site.example');
    const rawPath = url.startsWith('/') ? url.replace(/[?#].*$/, '') : u.pathname;
    const n = normalisePath(rawPath);
    if (!n.ok) throw new Error(`bad path ${url}: ${n.reason}`);
    return route(
      {
        method: 'GET',
        path: n.path,
        query: u.searchParams,
        host: url.startsWith('/') ? 'site.example' : u.host,
        headers: { 'user-agent': 'Mozilla/5.0', accept: 'text/html' },
        cookies: {},
        ip: '203.0.113.9',
        ...extra,
      },
      rules,
      lookup,
    );
  };
  return {
    go,
    summary(url, extra) {
      const d = go(url, extra);
      switch (d.type) {
        case 'file':
          return `file:${d.entry.path} ${d.status}`;
        case 'redirect':
          return `redirect:${d.status} ${d.location}`;
        case 'notFound':
          return `404:${d.entry?.path ?? 'none'}`;
        case 'proxy':
          return `proxy:${d.url}${d.cacheShared ? ' shared' : ''}`;
        case 'listing':
          return `listing:${d.dir} ${d.entries.map((e) => (e.kind === 'dir' ? `${e.name}/` : e.name)).join(',')}`;
        case 'block':
          return `block:${d.status}`;
        case 'challenge':
          return 'challenge';
      }
    },
  };
}
