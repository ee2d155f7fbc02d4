import fs from 'node:fs';
import path from 'node:path';
import { type Detection, detect, isWorkspaceRoot } from './settings.ts';

/**
 * Ranked build candidates of a repository (§6 "ranked monorepo candidates"): every folder that looks
 * like something a build could publish — a `package.json`, a Hugo or Jekyll site, or the topmost
 * folder of plain HTML — detected as a build there would be, then scored with the reasons for the
 * score. Reads files only (nothing runs); links are not followed.
 */

export interface Candidate {
  /** The folder, relative to the repository (`.` for its root). */
  appRoot: string;
  framework: string;
  packageManager: Detection['packageManager'];
  installCommand: string | null;
  buildCommand: string | null;
  outputDirectory: string;
  score: number;
  /** Why the score is what it is, one short phrase per point given or taken. */
  reasons: string[];
}

/** Folders never looked into. */
const SKIP = new Set(['node_modules', 'vendor', 'dist', 'build', 'out', 'public', '_site', 'coverage']);
/** How deep the scan goes (`apps/web` is 2) and how many folders it reads at most. */
const MAX_DEPTH = 3;
const MAX_DIRS = 2000;
/** At most this many candidates are answered. */
export const MAX_CANDIDATES = 20;

const STATIC_FRAMEWORKS = new Set([
  'vite',
  'astro',
  'nextjs-static-export',
  'docusaurus',
  'sveltekit-static',
  'eleventy',
  'hugo',
  'jekyll',
]);
const APP_PARENTS = new Set(['apps', 'sites', 'websites', 'web', 'www', 'frontend', 'examples']);
const LIBRARY_PARENTS = new Set(['packages', 'libs', 'lib', 'modules', 'tools', 'internal']);
const SITE_NAMES = new Set(['web', 'site', 'www', 'website', 'app', 'frontend', 'landing', 'home']);
const DOCS_NAMES = new Set(['docs', 'documentation', 'doc', 'storybook']);

const isFile = (p: string) => {
  try {
    return fs.lstatSync(p).isFile();
  } catch {
    return false;
  }
};

function packageJson(dir: string): Record<string, unknown> | null {
  try {
    const st = fs.lstatSync(path.join(dir, 'package.json'));
    if (!st.isFile() || st.size > 1024 * 1024) return null;
    const v = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : {};
  }
}

const looksLikeSite = (dir: string) =>
  ['hugo.toml', 'hugo.yaml', 'config.toml', '_config.yml'].some((f) => isFile(path.join(dir, f)));

/** Scores one folder a candidate; null when it is not one. */
function score(repo: string, rel: string, underHtml: boolean): Candidate | null {
  const dir = rel === '.' ? repo : path.join(repo, rel);
  const pkg = packageJson(dir);
  const site = looksLikeSite(dir);
  const html = isFile(path.join(dir, 'index.html'));
  if (!pkg && !site && !(html && !underHtml)) return null;
  const d = detect(dir, repo);
  const reasons: string[] = [];
  let points = 0;
  const add = (n: number, why: string) => {
    points += n;
    reasons.push(`${n > 0 ? '+' : ''}${n} ${why}`);
  };
  const parts = rel === '.' ? [] : rel.split('/');
  const parent = parts.length > 1 ? parts[parts.length - 2]! : null;
  const name = parts.at(-1) ?? null;

  if (STATIC_FRAMEWORKS.has(d.framework)) add(50, `uses ${d.framework}`);
  else if (d.framework === 'static' && (!pkg || html)) add(pkg ? 5 : 20, 'plain HTML (published as it is)');
  if (d.buildCommand && d.framework !== 'hugo' && d.framework !== 'jekyll') add(20, 'has a build script');
  if (pkg && rel === '.' && isWorkspaceRoot(dir)) add(-40, 'is the workspace root, not an app');
  if (pkg && !STATIC_FRAMEWORKS.has(d.framework)) {
    if (['main', 'module', 'exports', 'types'].some((k) => k in pkg))
      add(-25, 'exports a library entry (main/module/exports/types)');
    if (!d.buildCommand && d.framework !== 'static') add(-10, 'has no build script');
  }
  if (pkg && !d.buildCommand && d.framework === 'static' && !html) add(-20, 'has nothing to build or serve');
  if (parent && APP_PARENTS.has(parent)) add(10, `lives in ${parent}/`);
  if (parent && LIBRARY_PARENTS.has(parent)) add(-30, `lives in ${parent}/ (libraries)`);
  if (name && SITE_NAMES.has(name)) add(5, `is named ${name}`);
  if (name && DOCS_NAMES.has(name)) add(-5, `is named ${name} (documentation, not the main site)`);
  if (html && d.framework !== 'static') add(5, 'has an index.html');
  if (parts.length > 1) add(-(parts.length - 1), `is ${parts.length} folders deep`);
  return {
    appRoot: rel,
    framework: d.framework,
    packageManager: d.packageManager,
    installCommand: d.installCommand,
    buildCommand: d.buildCommand,
    outputDirectory: d.outputDirectory,
    score: points,
    reasons,
  };
}

/**
 * The repository's candidates, best first (score, then the shallower, then by path). A repository
 * with none (an empty one) answers its root as plain HTML.
 */
export function rankCandidates(repo: string): Candidate[] {
  const found: Candidate[] = [];
  let seen = 0;
  const walk = (rel: string, depth: number, underHtml: boolean, underPackage: boolean) => {
    if (seen++ >= MAX_DIRS) return;
    const dir = rel === '.' ? repo : path.join(repo, rel);
    const c = underPackage && !packageJson(dir) ? null : score(repo, rel, underHtml);
    if (c) found.push(c);
    if (depth >= MAX_DEPTH) return;
    // Inside an app that is not a workspace root, only nested packages count (not its src/ pages).
    const pkgHere = packageJson(dir) !== null && !(rel === '.' && isWorkspaceRoot(dir));
    const htmlHere = underHtml || isFile(path.join(dir, 'index.html'));
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!e.isDirectory() || e.name.startsWith('.') || SKIP.has(e.name)) continue;
      walk(rel === '.' ? e.name : `${rel}/${e.name}`, depth + 1, htmlHere, underPackage || pkgHere);
    }
  };
  walk('.', 0, false, false);
  if (!found.length) {
    found.push({
      appRoot: '.',
      framework: 'static',
      packageManager: null,
      installCommand: null,
      buildCommand: null,
      outputDirectory: '.',
      score: 0,
      reasons: ['nothing else found: the repository is published as it is'],
    });
  }
  const depth = (c: Candidate) => (c.appRoot === '.' ? 0 : c.appRoot.split('/').length);
  return found
    .sort(
      (a, b) =>
        b.score - a.score ||
        depth(a) - depth(b) ||
        (a.appRoot < b.appRoot ? -1 : a.appRoot > b.appRoot ? 1 : 0),
    )
    .slice(0, MAX_CANDIDATES);
}
