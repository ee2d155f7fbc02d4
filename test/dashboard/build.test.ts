/**
 * The dashboard ships as its committed build (`dist/dashboard/`, see docs/guides/dashboard.md): this
 * checks that build and the generated API types are what the sources produce now, and measures the
 * first load against the budget (< 200 KB of compressed JS + CSS for the spaces list).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { build } from 'vite';
import { describe, expect, it } from 'vitest';
import { renderDashboardApiTypes } from '../../web/build/openapi-types.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIST = path.join(ROOT, 'dist/dashboard');
const STALE = 'run `npm run build:dashboard` and commit web/src/api/openapi.d.ts and dist/dashboard/';

function files(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(dir, p), fs.readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

describe('the dashboard build', () => {
  it('has API types generated from the current OpenAPI document', async () => {
    const committed = fs.readFileSync(path.join(ROOT, 'web/src/api/openapi.d.ts'), 'utf8');
    expect(committed === (await renderDashboardApiTypes()), STALE).toBe(true);
  }, 60_000);

  it('is current: building the sources again gives the committed dist/dashboard/', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-dashboard-'));
    // Vitest sets NODE_ENV=test, which Vite would build into the bundle; build as `npm run` does.
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await build({
        mode: 'production',
        configFile: path.join(ROOT, 'web/vite.config.ts'),
        logLevel: 'silent',
        build: { outDir: out, emptyOutDir: true },
      });
      const fresh = files(out);
      const committed = files(DIST);
      expect([...committed.keys()].sort(), STALE).toEqual([...fresh.keys()].sort());
      for (const [name, bytes] of fresh)
        expect(committed.get(name)!.equals(bytes), `${name}: ${STALE}`).toBe(true);
    } finally {
      process.env.NODE_ENV = nodeEnv;
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);

  it('loads the spaces list with less than 200 KB of compressed JS and CSS', () => {
    const index = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
    const initial = [...index.matchAll(/(?:src|href)="\/dashboard\/(assets\/[^"]+\.(?:js|css))"/g)].map(
      (m) => m[1]!,
    );
    expect(initial.length).toBeGreaterThanOrEqual(2);
    let raw = 0;
    let gzip = 0;
    let br = 0;
    for (const f of initial) {
      const bytes = fs.readFileSync(path.join(DIST, f));
      raw += bytes.length;
      gzip += zlib.gzipSync(bytes, { level: 9 }).length;
      br += zlib.brotliCompressSync(bytes).length;
    }
    console.log(
      `dashboard first load: ${initial.length} files, ${(raw / 1024).toFixed(1)} KB raw, ${(gzip / 1024).toFixed(1)} KB gzip, ${(br / 1024).toFixed(1)} KB brotli (budget 200 KB compressed)`,
    );
    expect(gzip).toBeLessThan(200 * 1024);
  });
});
