import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rankCandidates } from '../../src/domain/builds/candidates.ts';

/**
 * Ranked build candidates (§6 "ranked monorepo candidates"): a table of repositories written to disk,
 * each with the order its candidates must come in and what the best one must say.
 */

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'candidates-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const pkg = (o: object) => JSON.stringify(o);
const vite = pkg({ scripts: { build: 'vite build' }, devDependencies: { vite: '^5' } });
const docusaurus = pkg({
  scripts: { build: 'docusaurus build' },
  dependencies: { '@docusaurus/core': '^3', react: '^18' },
});
const library = pkg({
  name: '@acme/ui',
  main: 'dist/index.js',
  types: 'dist/index.d.ts',
  scripts: { build: 'tsc' },
  devDependencies: { typescript: '^5' },
});
const workspaceRoot = pkg({
  private: true,
  workspaces: ['apps/*', 'packages/*'],
  scripts: { build: 'turbo build' },
});

interface Case {
  name: string;
  files: Record<string, string>;
  /** The candidates' folders, best first. */
  order: string[];
  best: Record<string, unknown>;
  /** Reasons the best candidate's list must contain (substrings). */
  reasons?: string[];
}

const cases: Case[] = [
  {
    name: 'npm workspace: apps/web (Vite) before apps/docs (Docusaurus), the workspace root and packages/ui (a library) last',
    files: {
      'package.json': workspaceRoot,
      'package-lock.json': '{}',
      'apps/web/package.json': vite,
      'apps/web/index.html': '<div id=app></div>',
      'apps/web/src/index.html': 'not a candidate: inside an app',
      'apps/docs/package.json': docusaurus,
      'packages/ui/package.json': library,
    },
    order: ['apps/web', 'apps/docs', '.', 'packages/ui'],
    best: {
      appRoot: 'apps/web',
      framework: 'vite',
      packageManager: 'npm',
      installCommand: 'npm ci',
      buildCommand: 'npm run build',
      outputDirectory: 'dist',
    },
    reasons: ['uses vite', 'has a build script', 'lives in apps/'],
  },
  {
    name: 'pnpm workspace: the lockfile at the root names the package manager of every app',
    files: {
      'package.json': pkg({ private: true }),
      'pnpm-workspace.yaml': 'packages:\n  - apps/*\n',
      'pnpm-lock.yaml': 'lockfileVersion: 9\n',
      'apps/site/package.json': pkg({ scripts: { build: 'astro build' }, dependencies: { astro: '^4' } }),
      'apps/admin/package.json': pkg({
        scripts: { build: 'node build.js' },
        dependencies: { express: '^4' },
      }),
    },
    order: ['apps/site', 'apps/admin', '.'],
    best: {
      appRoot: 'apps/site',
      framework: 'astro',
      packageManager: 'pnpm',
      installCommand: 'pnpm install',
      buildCommand: 'pnpm build',
      outputDirectory: 'dist',
    },
  },
  {
    name: 'a single app at the root is the only candidate',
    files: { 'package.json': vite, 'yarn.lock': '', 'index.html': '<div></div>', 'src/page/index.html': 'x' },
    order: ['.'],
    best: {
      appRoot: '.',
      framework: 'vite',
      packageManager: 'yarn',
      installCommand: 'yarn install --frozen-lockfile',
    },
  },
  {
    name: 'plain HTML: the topmost folder with an index.html, not its subpages',
    files: { 'index.html': 'home', 'about/index.html': 'about', 'blog/post/index.html': 'post' },
    order: ['.'],
    best: { appRoot: '.', framework: 'static', buildCommand: null, outputDirectory: '.' },
    reasons: ['plain HTML'],
  },
  {
    name: 'a Hugo site in site/ beats a tools/ package',
    files: {
      'site/hugo.toml': 'title = "x"',
      'site/content/_index.md': '# hi',
      'tools/lint/package.json': pkg({ main: 'index.js', scripts: { test: 'node t.js' } }),
    },
    order: ['site', 'tools/lint'],
    best: { appRoot: 'site', framework: 'hugo', buildCommand: 'hugo', outputDirectory: 'public' },
  },
  {
    name: 'Next static export and Eleventy under sites/: the shallower-named web app first on equal framework points',
    files: {
      'sites/www/package.json': pkg({ scripts: { build: 'next build' }, dependencies: { next: '^14' } }),
      'sites/blog/package.json': pkg({
        scripts: { build: 'eleventy' },
        devDependencies: { '@11ty/eleventy': '^2' },
      }),
    },
    order: ['sites/www', 'sites/blog'],
    best: {
      appRoot: 'sites/www',
      framework: 'nextjs-static-export',
      outputDirectory: 'out',
      installCommand: 'npm install',
    },
    reasons: ['is named www'],
  },
  {
    name: 'an empty repository answers its root as plain HTML',
    files: { 'README.md': 'nothing here' },
    order: ['.'],
    best: { appRoot: '.', framework: 'static', score: 0 },
  },
];

describe('ranked build candidates', () => {
  it.each(cases)('$name', (c) => {
    const dir = fs.mkdtempSync(path.join(root, 'case-'));
    for (const [rel, text] of Object.entries(c.files)) {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    }
    const ranked = rankCandidates(dir);
    expect(ranked.map((r) => r.appRoot)).toEqual(c.order);
    expect(ranked[0]).toMatchObject(c.best);
    for (const why of c.reasons ?? []) expect(ranked[0]!.reasons.join('; ')).toContain(why);
    // Scores never increase down the list, and each is explained.
    for (let i = 1; i < ranked.length; i++)
      expect(ranked[i]!.score).toBeLessThanOrEqual(ranked[i - 1]!.score);
    for (const r of ranked) expect(r.reasons.length).toBeGreaterThan(0);
  });

  it('does not follow links out of the repository nor read node_modules', () => {
    const dir = fs.mkdtempSync(path.join(root, 'links-'));
    const outside = fs.mkdtempSync(path.join(root, 'outside-'));
    fs.writeFileSync(path.join(outside, 'package.json'), vite);
    fs.mkdirSync(path.join(dir, 'node_modules', 'x'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'node_modules', 'x', 'package.json'), vite);
    fs.symlinkSync(outside, path.join(dir, 'linked'));
    fs.writeFileSync(path.join(dir, 'index.html'), 'home');
    expect(rankCandidates(dir).map((r) => r.appRoot)).toEqual(['.']);
  });
});
