import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { ApiError } from '../../errors/problem.ts';
import type { RepositoryConnectionRow } from '../../store/repos/builds/connections.ts';
import type { Store } from '../../store/repos/index.ts';
import type { SecretBox } from '../publishing/secrets.ts';
import type { SpaceRow } from '../spaces/service.ts';
import { type Candidate, rankCandidates } from './candidates.ts';
import { checkCloneUrl, checkRef, cloneArgs, gitEnv } from './git.ts';
import {
  type ConnectionDefaults,
  type ConnectionSettings,
  type Detection,
  type ResolvedSettings,
  resolveSettings,
} from './settings.ts';

const run = promisify(execFile);

/** Providers a connection can have; git-host apps (installation + repository id) come later. */
export const PROVIDERS = ['generic'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** An HTTPS token: sent as HTTP Basic `<username>:<token>` (username `x-access-token` unless given). */
export interface TokenCredential {
  token: string;
  username?: string;
}

export interface ConnectionInput {
  provider?: Provider;
  cloneUrl?: string;
  credential?: TokenCredential | null;
  defaultBranch?: string | null;
  productionBranch?: string | null;
  appRoot?: string | null;
  autoDeployProduction?: boolean;
  autoDeployPreviews?: boolean;
  /** Build settings kept on the connection (below the space's config and the repository's file). */
  buildSettings?: ConnectionSettings | null;
}

/** What analyze answers: the settings a build would run with, detection, the ranked candidates. */
export interface Analysis {
  ref: string;
  commitSha: string | null;
  settings: ResolvedSettings;
  detected: Detection;
  candidates: Candidate[];
  /** The candidate "apply best" saved on the connection (null when not asked). */
  applied: Candidate | null;
}

/** What a clone of the connection needs: the URL checked, and git's `-c`s carried in its environment. */
export interface ConnectionClone {
  url: string;
  /** `GIT_CONFIG_*` variables sending the credential (never on a command line, where `ps` shows it). */
  env: NodeJS.ProcessEnv;
  /** The credential's forms a log must redact. */
  secrets: string[];
}

/** The connection's app root and saved build settings, as settings resolution takes them. */
export function connectionDefaults(c: RepositoryConnectionRow): ConnectionDefaults {
  let settings: ConnectionSettings | null = null;
  try {
    settings = c.build_settings ? (JSON.parse(c.build_settings) as ConnectionSettings) : null;
  } catch {
    settings = null;
  }
  return { appRoot: c.app_root, settings };
}

/** The settings a candidate stands for, as saved on the connection by "apply best". */
export function candidateSettings(c: Candidate): ConnectionSettings {
  return {
    frameworkPreset: c.framework,
    installCommand: c.installCommand,
    buildCommand: c.buildCommand,
    outputDirectory: c.outputDirectory,
  };
}

/** The branch a build from the connection goes `live` for. */
export function productionBranchOf(c: RepositoryConnectionRow): string {
  return c.production_branch || c.default_branch || 'main';
}

function checkAppRoot(root: string | null | undefined): void {
  if (root == null) return;
  const norm = path.posix.normalize(root);
  if (
    !root ||
    root.length > 1024 ||
    path.posix.isAbsolute(root) ||
    norm.startsWith('..') ||
    root.includes('\0')
  )
    throw new ApiError('validation_error', 'appRoot is a relative folder inside the repository.', {
      pointer: '/appRoot',
    });
}

/**
 * A space's repository connection (§6): the `generic` provider (a clone URL under the same policy as
 * builds' clones, `SPACES_GIT_ALLOW`, and an optional HTTPS token sealed with the server's secret
 * key, never returned), its branches, app root and auto-deploy flags; `analyze` clones it (shallow,
 * hardened) and reports what a build would run, without building.
 */
export class RepositoryConnectionService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly box: SecretBox,
  ) {}

  private aad(spaceId: string): string {
    return `repository-connection:${spaceId}`;
  }

  async get(space: SpaceRow): Promise<RepositoryConnectionRow> {
    const c = await this.store.repos.repositoryConnections.forSpace(space.id);
    if (!c)
      throw new ApiError('repository_not_connected', `The space ${space.id} has no repository connection.`);
    return c;
  }

  find(spaceId: string): Promise<RepositoryConnectionRow | null> {
    return this.store.repos.repositoryConnections.forSpace(spaceId);
  }

  private async check(input: ConnectionInput): Promise<void> {
    if (input.cloneUrl !== undefined) {
      try {
        await checkCloneUrl(input.cloneUrl, this.config.builds.gitAllow);
      } catch (err) {
        if (err instanceof ApiError)
          throw new ApiError(err.code, err.detail, { ...err.extras, pointer: '/cloneUrl' });
        throw err;
      }
    }
    for (const key of ['defaultBranch', 'productionBranch'] as const) {
      const v = input[key];
      if (v) {
        try {
          checkRef(v);
        } catch {
          throw new ApiError('invalid_git_ref', `"${v}" is not a branch name git accepts.`, {
            pointer: `/${key}`,
          });
        }
      }
    }
    checkAppRoot(input.appRoot);
  }

  async create(
    space: SpaceRow,
    input: ConnectionInput & { cloneUrl: string },
  ): Promise<RepositoryConnectionRow> {
    await this.check(input);
    const now = this.clock.now().toISOString();
    const row: RepositoryConnectionRow = {
      space_id: space.id,
      tenant_id: space.tenant_id,
      provider: input.provider ?? 'generic',
      clone_url: input.cloneUrl,
      repository: null,
      installation_id: null,
      credential_sealed: input.credential ? this.seal(space.id, input.credential) : null,
      default_branch: input.defaultBranch ?? null,
      production_branch: input.productionBranch ?? null,
      app_root: input.appRoot ?? null,
      auto_deploy_production: input.autoDeployProduction === false ? 0 : 1,
      auto_deploy_previews: input.autoDeployPreviews === false ? 0 : 1,
      build_settings: input.buildSettings ? JSON.stringify(input.buildSettings) : null,
      created_at: now,
      updated_at: now,
    };
    if (!(await this.store.repos.repositoryConnections.create(row))) {
      throw new ApiError(
        'repository_connection_exists',
        `The space ${space.id} is connected to a repository already; PATCH or DELETE it first.`,
      );
    }
    return row;
  }

  async update(space: SpaceRow, input: ConnectionInput): Promise<RepositoryConnectionRow> {
    await this.get(space);
    await this.check(input);
    const patch: Partial<RepositoryConnectionRow> = { updated_at: this.clock.now().toISOString() };
    if (input.cloneUrl !== undefined) patch.clone_url = input.cloneUrl;
    if (input.credential !== undefined)
      patch.credential_sealed = input.credential ? this.seal(space.id, input.credential) : null;
    if (input.defaultBranch !== undefined) patch.default_branch = input.defaultBranch;
    if (input.productionBranch !== undefined) patch.production_branch = input.productionBranch;
    if (input.appRoot !== undefined) patch.app_root = input.appRoot;
    if (input.autoDeployProduction !== undefined)
      patch.auto_deploy_production = input.autoDeployProduction ? 1 : 0;
    if (input.autoDeployPreviews !== undefined) patch.auto_deploy_previews = input.autoDeployPreviews ? 1 : 0;
    if (input.buildSettings !== undefined)
      patch.build_settings = input.buildSettings ? JSON.stringify(input.buildSettings) : null;
    await this.store.repos.repositoryConnections.update(space.id, patch);
    return this.get(space);
  }

  async delete(space: SpaceRow): Promise<void> {
    if (!(await this.store.repos.repositoryConnections.deleteForSpace(space.id)))
      throw new ApiError('repository_not_connected', `The space ${space.id} has no repository connection.`);
  }

  private seal(spaceId: string, c: TokenCredential): string {
    return this.box.seal(JSON.stringify({ token: c.token, username: c.username ?? null }), this.aad(spaceId));
  }

  /** The URL (checked again: names can move) and the credential's git environment for a clone. */
  async cloneOf(
    c: RepositoryConnectionRow,
  ): Promise<ConnectionClone & { pins: string[]; protocol: 'https' | 'http' | 'file' }> {
    const target = await checkCloneUrl(c.clone_url, this.config.builds.gitAllow);
    if (!c.credential_sealed) return { ...target, env: {}, secrets: [] };
    const { token, username } = JSON.parse(this.box.open(c.credential_sealed, this.aad(c.space_id))) as {
      token: string;
      username: string | null;
    };
    const basic = Buffer.from(`${username || 'x-access-token'}:${token}`).toString('base64');
    return {
      ...target,
      env: {
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'http.extraHeader',
        GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
      },
      secrets: [token, basic],
    };
  }

  /**
   * Clones the connection at `ref` (default: its production branch) shallowly with the hardened
   * options into a throwaway folder, resolves the build settings there as a build would and ranks the
   * repository's candidates (monorepos: every app, best first). `apply: 'best'` saves the top
   * candidate on the connection (its folder as `appRoot`, its framework, commands and output as the
   * connection's build settings) and answers the settings as they resolve afterwards.
   */
  async analyze(space: SpaceRow, ref: string | null, apply: 'best' | null = null): Promise<Analysis> {
    let c = await this.get(space);
    const at = ref ?? productionBranchOf(c);
    checkRef(at);
    const target = await this.cloneOf(c);
    const work = await fsp.mkdtemp(
      path.join(os.tmpdir(), `spaces-analyze-${randomBytes(3).toString('hex')}-`),
    );
    try {
      const home = path.join(work, 'home');
      const hooks = path.join(work, 'no-hooks');
      const checkout = path.join(work, 'src');
      await fsp.mkdir(home);
      await fsp.mkdir(hooks);
      try {
        await run('git', cloneArgs(target, at, checkout, hooks), {
          env: { ...gitEnv(home), ...target.env },
          timeout: 120_000,
          maxBuffer: 1024 * 1024,
        });
      } catch (err) {
        let why =
          String((err as { stderr?: string }).stderr ?? '')
            .trim()
            .split('\n')
            .pop() ?? '';
        for (const s of target.secrets) why = why.split(s).join('[redacted]');
        throw new ApiError(
          'git_clone_failed',
          `git clone of ${c.clone_url} at ${at} failed: ${why || 'no output'}.`,
          {
            details: { ref: at },
          },
        );
      }
      const sha =
        (await fsp.readFile(path.join(checkout, '.git', 'shallow'), 'utf8').catch(() => ''))
          .trim()
          .split('\n')[0] || null;
      await fsp.rm(path.join(checkout, '.git'), { recursive: true, force: true });
      const candidates = rankCandidates(checkout);
      let applied: Candidate | null = null;
      if (apply === 'best') {
        applied = candidates[0]!;
        await this.store.repos.repositoryConnections.update(space.id, {
          app_root: applied.appRoot === '.' ? null : applied.appRoot,
          build_settings: JSON.stringify(candidateSettings(applied)),
          updated_at: this.clock.now().toISOString(),
        });
        c = await this.get(space);
      }
      const overlay = space.config
        ? ((JSON.parse(space.config) as { build?: Record<string, unknown> }).build ?? null)
        : null;
      const { settings, detection } = resolveSettings(
        checkout,
        overlay,
        this.config.builds.timeoutSeconds,
        connectionDefaults(c),
      );
      return { ref: at, commitSha: sha, settings, detected: detection, candidates, applied };
    } finally {
      await fsp.rm(work, { recursive: true, force: true }).catch(() => {});
    }
  }
}
