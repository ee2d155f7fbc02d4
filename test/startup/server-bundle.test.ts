import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleDir, runBin } from '../helpers/bundle.ts';

// `spaces server` runs from a bundle of the sources (bin/server-bundle.mjs, issue 20: cold start),
// rebuilt whenever a source changes, so a stale bundle is never what runs.

describe('the server bundle (bin/server-bundle.mjs)', () => {
  it('is built on first start, reused while the sources are unchanged, rebuilt when one changes', () => {
    const dir = bundleDir('spaces-server-test-');
    const env = { SPACES_SERVER_BUNDLE_DIR: dir };
    const first = runBin(['server', '--help'], env);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain('SPACES_CACHE_BYTES');
    const metaFile = path.join(dir, 'meta.json');
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
    // Every source file is stamped (packages by their package.json): a change means a rebuild.
    expect(Object.keys(meta.inputs)).toEqual(
      expect.arrayContaining(['src/main.ts', 'src/server.ts', 'src/serve/edge.ts', 'bin/bundle.mjs']),
    );
    const keys = Object.keys(meta.inputs);
    expect(keys.some((k) => k.endsWith('node_modules/fastify/package.json'))).toBe(true);
    expect(keys.some((k) => k.endsWith('node_modules/fastify/fastify.js'))).toBe(false);
    const entry = path.join(dir, meta.out, 'server.mjs');
    const builtAt = fs.statSync(entry).mtimeMs;
    const again = runBin(['server', '--help'], env);
    expect(again.stdout).toBe(first.stdout);
    expect(JSON.parse(fs.readFileSync(metaFile, 'utf8')).out).toBe(meta.out);
    expect(fs.statSync(entry).mtimeMs).toBe(builtAt);

    // A source whose stamp no longer matches (an edit): the next start rebuilds, and never runs
    // the old bundle, even one that would still load.
    meta.inputs['src/serve/edge.ts'][0] -= 1000;
    fs.writeFileSync(metaFile, JSON.stringify(meta));
    fs.writeFileSync(entry, 'throw new Error("stale bundle was run")');
    const rebuilt = runBin(['server', '--help'], env);
    expect(rebuilt.status, rebuilt.stderr).toBe(0);
    expect(rebuilt.stdout).toBe(first.stdout);
    const after = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
    expect(after.out).not.toBe(meta.out);
    expect(fs.readFileSync(path.join(dir, after.out, 'server.mjs'), 'utf8')).not.toContain('stale bundle');
  });

  it('runs from the sources when asked to, or when the bundle cannot be written', () => {
    const viaSources = runBin(['server', '--help'], { SPACES_SERVER_BUNDLE: '0' });
    expect(viaSources.status).toBe(0);
    const file = path.join(bundleDir('spaces-server-test-'), 'not-a-dir');
    fs.writeFileSync(file, '');
    const unwritable = runBin(['server', '--help'], { SPACES_SERVER_BUNDLE_DIR: path.join(file, 'cache') });
    expect(unwritable.status).toBe(0);
    expect(unwritable.stdout).toBe(viaSources.stdout);
  });
});
