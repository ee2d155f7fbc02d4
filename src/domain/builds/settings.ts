import fs from 'node:fs';
import path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';

/** The build settings a run uses; each comes from the space's config, the repository's file, detection or a default. */
export const SETTING_KEYS = [
  'rootDirectory',
  'installCommand',
  'buildCommand',
  'outputDirectory',
  'ignoredBuildCommand',
  'frameworkPreset',
  'timeoutSeconds',
] as const;
export type SettingKey = (typeof SETTING_KEYS)[number];
export type SettingSource = 'space_config' | 'repository' | 'connection' | 'detected' | 'default';

export interface ResolvedSetting {
  value: string | number | null;
  source: SettingSource;
}
export type ResolvedSettings = Record<SettingKey, ResolvedSetting>;

export interface Detection {
  framework: string;
  packageManager: 'npm' | 'pnpm' | 'yarn' | 'bun' | null;
  installCommand: string | null;
  buildCommand: string | null;
  outputDirectory: string;
}

const read = (file: string): string | null => {
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.size > 1024 * 1024) return null;
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};
const has = (dir: string, name: string) => {
  try {
    return fs.lstatSync(path.join(dir, name)).isFile();
  } catch {
    return false;
  }
};

/** Frameworks told apart by a dependency, with their conventional build output. */
const JS_FRAMEWORKS: Array<{ dep: string; framework: string; output: string }> = [
  { dep: '@docusaurus/core', framework: 'docusaurus', output: 'build' },
  { dep: 'astro', framework: 'astro', output: 'dist' },
  { dep: 'next', framework: 'nextjs-static-export', output: 'out' },
  { dep: '@sveltejs/adapter-static', framework: 'sveltekit-static', output: 'build' },
  { dep: '@11ty/eleventy', framework: 'eleventy', output: '_site' },
  { dep: 'vite', framework: 'vite', output: 'dist' },
];

const LOCKFILES = ['pnpm-lock.yaml', 'yarn.lock', 'bun.lockb', 'bun.lock', 'package-lock.json'];

/** A folder that declares a JS workspace (its members install from it). */
export function isWorkspaceRoot(dir: string): boolean {
  if (has(dir, 'pnpm-workspace.yaml')) return true;
  const text = read(path.join(dir, 'package.json'));
  if (text === null) return false;
  try {
    return Boolean((JSON.parse(text) as { workspaces?: unknown }).workspaces);
  } catch {
    return false;
  }
}

/**
 * Where the package manager's lockfile is: the folder itself, else the nearest folder above it (up to
 * the repository's root) that declares a workspace — a monorepo's members share its lockfile.
 */
function lockfileDir(dir: string, repoRoot: string): string {
  if (LOCKFILES.some((f) => has(dir, f))) return dir;
  for (let d = dir; d !== repoRoot && d.startsWith(repoRoot + path.sep); ) {
    d = path.dirname(d);
    if (isWorkspaceRoot(d) && LOCKFILES.some((f) => has(d, f))) return d;
  }
  return dir;
}

/**
 * What a directory looks like: the package manager from its lockfile, the framework from its
 * dependencies (or Hugo/Jekyll config files), and the commands and output directory that go with it.
 * A folder with none of these is plain HTML, published as it is.
 */
export function detect(dir: string, repoRoot: string = dir): Detection {
  const pkgText = read(path.join(dir, 'package.json'));
  if (pkgText !== null) {
    let pkg: { scripts?: Record<string, unknown>; dependencies?: object; devDependencies?: object } = {};
    try {
      pkg = JSON.parse(pkgText);
    } catch {
      /* an unreadable package.json: treated as one without scripts */
    }
    const lockDir = lockfileDir(dir, repoRoot);
    const pm = has(lockDir, 'pnpm-lock.yaml')
      ? 'pnpm'
      : has(lockDir, 'yarn.lock')
        ? 'yarn'
        : has(lockDir, 'bun.lockb') || has(lockDir, 'bun.lock')
          ? 'bun'
          : 'npm';
    const deps = { ...(pkg.dependencies ?? {}), ...(pkg.devDependencies ?? {}) } as Record<string, unknown>;
    const fw = JS_FRAMEWORKS.find((f) => f.dep in deps);
    const hasDeps = Object.keys(deps).length > 0;
    const install = !hasDeps
      ? null
      : pm === 'npm'
        ? has(lockDir, 'package-lock.json')
          ? 'npm ci'
          : 'npm install'
        : pm === 'yarn'
          ? 'yarn install --frozen-lockfile'
          : `${pm} install`;
    const build = typeof pkg.scripts?.build === 'string' ? `${pm === 'npm' ? 'npm run' : pm} build` : null;
    return {
      framework: fw?.framework ?? (build ? 'node' : 'static'),
      packageManager: pm,
      installCommand: install,
      buildCommand: build,
      outputDirectory: fw?.output ?? (build ? 'dist' : '.'),
    };
  }
  if (has(dir, 'hugo.toml') || has(dir, 'hugo.yaml') || has(dir, 'config.toml')) {
    return {
      framework: 'hugo',
      packageManager: null,
      installCommand: null,
      buildCommand: 'hugo',
      outputDirectory: 'public',
    };
  }
  if (has(dir, '_config.yml')) {
    return {
      framework: 'jekyll',
      packageManager: null,
      installCommand: has(dir, 'Gemfile') ? 'bundle install' : null,
      buildCommand: has(dir, 'Gemfile') ? 'bundle exec jekyll build' : 'jekyll build',
      outputDirectory: '_site',
    };
  }
  return {
    framework: 'static',
    packageManager: null,
    installCommand: null,
    buildCommand: null,
    outputDirectory: '.',
  };
}

/** The `build` object of the repository's `spaces.jsonc`/`spaces.json` (null: none or unreadable). */
export function repositoryBuildSettings(dir: string): Record<string, unknown> | null {
  const text = read(path.join(dir, 'spaces.jsonc')) ?? read(path.join(dir, 'spaces.json'));
  if (text === null) return null;
  const value = parseJsonc(text, [], { allowTrailingComma: true, disallowComments: false }) as unknown;
  if (!value || typeof value !== 'object') return null;
  const build = (value as Record<string, unknown>).build;
  return build && typeof build === 'object' && !Array.isArray(build)
    ? (build as Record<string, unknown>)
    : null;
}

const valid = (key: SettingKey, v: unknown): boolean =>
  key === 'timeoutSeconds'
    ? Number.isInteger(v) && (v as number) >= 60 && (v as number) <= 7200
    : v === null || (typeof v === 'string' && v.length > 0 && v.length <= 4096);

/** The build settings a repository connection may hold ("apply best" writes them; PATCH too). */
export const CONNECTION_SETTING_KEYS = [
  'frameworkPreset',
  'installCommand',
  'buildCommand',
  'outputDirectory',
] as const satisfies readonly SettingKey[];
export type ConnectionSettings = Partial<Record<(typeof CONNECTION_SETTING_KEYS)[number], string | null>>;

/** What a repository connection adds to the resolution: its app root and saved settings. */
export interface ConnectionDefaults {
  appRoot: string | null;
  settings: ConnectionSettings | null;
}

/**
 * Resolves each setting: the space's config overlay (`build`) wins over the repository's settings
 * file, which wins over the repository connection (its app root, its saved settings), then detection
 * (run in the root directory so chosen), then defaults.
 */
export function resolveSettings(
  checkout: string,
  overlay: Record<string, unknown> | null,
  defaultTimeoutSeconds: number,
  connection: ConnectionDefaults | null = null,
): { settings: ResolvedSettings; detection: Detection } {
  const repo = repositoryBuildSettings(checkout) ?? {};
  const saved = (connection?.settings ?? {}) as Record<string, unknown>;
  const pick = (key: SettingKey): ResolvedSetting | null => {
    if (overlay && key in overlay && valid(key, overlay[key]))
      return { value: overlay[key] as string, source: 'space_config' };
    if (key in repo && valid(key, repo[key])) return { value: repo[key] as string, source: 'repository' };
    if (key in saved && valid(key, saved[key])) return { value: saved[key] as string, source: 'connection' };
    return null;
  };
  const connectionRoot = connection?.appRoot ?? null;
  const root: ResolvedSetting =
    pick('rootDirectory') ??
    (connectionRoot ? { value: connectionRoot, source: 'connection' } : { value: '.', source: 'default' });
  const detection = detect(path.join(checkout, String(root.value ?? '.')), checkout);
  const detected = (v: string | null): ResolvedSetting => ({ value: v, source: 'detected' });
  const settings: ResolvedSettings = {
    rootDirectory: root,
    installCommand: pick('installCommand') ?? detected(detection.installCommand),
    buildCommand: pick('buildCommand') ?? detected(detection.buildCommand),
    outputDirectory: pick('outputDirectory') ?? detected(detection.outputDirectory),
    ignoredBuildCommand: pick('ignoredBuildCommand') ?? { value: null, source: 'default' },
    frameworkPreset: pick('frameworkPreset') ?? detected(detection.framework),
    timeoutSeconds: pick('timeoutSeconds') ?? { value: defaultTimeoutSeconds, source: 'default' },
  };
  return { settings, detection };
}
