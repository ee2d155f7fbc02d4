import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundleDir, runBin } from '../helpers/bundle.ts';

describe('the CLI bundle (bin/cli-bundle.mjs)', () => {
  it('is built on first use, reused while the sources are unchanged, rebuilt when one changes', () => {
    const dir = bundleDir('spaces-cli-test-');
    const env = { SPACES_CLI_BUNDLE_DIR: dir };
    const first = runBin(['--version'], env);
    expect(first.status).toBe(0);
    const bundle = path.join(dir, 'cli.mjs');
    const metaFile = path.join(dir, 'meta.json');
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
    // Every source the CLI is made of is stamped: a change to any of them means a rebuild.
    expect(Object.keys(meta.inputs)).toEqual(
      expect.arrayContaining(['src/cli/main.ts', 'src/cli/publish.ts']),
    );
    const builtAt = fs.statSync(bundle).mtimeMs;
    // The bundle loads on its own: a module it cannot load sends every command back to the (slow)
    // sources without a word.
    const load = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(pathToFileURL(bundle).href)}); process.exit(typeof m.runCli === 'function' ? 0 : 3);`,
      ],
      { encoding: 'utf8' },
    );
    expect(load.status, load.stderr).toBe(0);

    const again = runBin(['--version'], env);
    expect(again.stdout).toBe(first.stdout);
    expect(fs.statSync(bundle).mtimeMs).toBe(builtAt);

    // A stamp that no longer matches its source (an edit): the next command rebuilds.
    meta.inputs['src/cli/main.ts'][1] += 1;
    fs.writeFileSync(metaFile, JSON.stringify(meta));
    fs.writeFileSync(bundle, 'throw new Error("stale bundle was run")');
    const rebuilt = runBin(['--version'], env);
    expect(rebuilt.status).toBe(0);
    expect(rebuilt.stdout).toBe(first.stdout);
    expect(fs.readFileSync(bundle, 'utf8')).not.toContain('stale bundle');
  });

  it('runs from the sources when asked to, or when the bundle cannot be written', () => {
    const viaSources = runBin(['--version'], { SPACES_CLI_BUNDLE: '0' });
    expect(viaSources.status).toBe(0);
    const file = path.join(bundleDir('spaces-cli-test-'), 'not-a-dir');
    fs.writeFileSync(file, '');
    const unwritable = runBin(['--version'], { SPACES_CLI_BUNDLE_DIR: path.join(file, 'cache') });
    expect(unwritable.status).toBe(0);
    expect(unwritable.stdout).toBe(viaSources.stdout);
  });
});
