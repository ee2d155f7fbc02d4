import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/spaces.mjs');

/** A bundle directory of its own, inside the project (the bundle resolves packages from there). */
function bundleDir(): string {
  const base = path.join(ROOT, 'node_modules', '.cache');
  fs.mkdirSync(base, { recursive: true });
  const dir = fs.mkdtempSync(path.join(base, 'spaces-cli-test-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function run(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), NO_COLOR: '1', ...env },
    encoding: 'utf8',
  });
}

describe('the CLI bundle (bin/cli-bundle.mjs)', () => {
  it('is built on first use, reused while the sources are unchanged, rebuilt when one changes', () => {
    const dir = bundleDir();
    const env = { SPACES_CLI_BUNDLE_DIR: dir };
    const first = run(['--version'], env);
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

    const again = run(['--version'], env);
    expect(again.stdout).toBe(first.stdout);
    expect(fs.statSync(bundle).mtimeMs).toBe(builtAt);

    // A stamp that no longer matches its source (an edit): the next command rebuilds.
    meta.inputs['src/cli/main.ts'][1] += 1;
    fs.writeFileSync(metaFile, JSON.stringify(meta));
    fs.writeFileSync(bundle, 'throw new Error("stale bundle was run")');
    const rebuilt = run(['--version'], env);
    expect(rebuilt.status).toBe(0);
    expect(rebuilt.stdout).toBe(first.stdout);
    expect(fs.readFileSync(bundle, 'utf8')).not.toContain('stale bundle');
  });

  it('runs from the sources when asked to, or when the bundle cannot be written', () => {
    const viaSources = run(['--version'], { SPACES_CLI_BUNDLE: '0' });
    expect(viaSources.status).toBe(0);
    const file = path.join(bundleDir(), 'not-a-dir');
    fs.writeFileSync(file, '');
    const unwritable = run(['--version'], { SPACES_CLI_BUNDLE_DIR: path.join(file, 'cache') });
    expect(unwritable.status).toBe(0);
    expect(unwritable.stdout).toBe(viaSources.stdout);
  });
});
