import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ApiError } from '../../errors/problem.ts';
import type { Principal } from '../auth/principal.ts';
import type { SpaceRow } from '../spaces/service.ts';
import { gitEnv } from './git.ts';
import type { BuildService } from './service.ts';

const run = promisify(execFile);

/** The branch a push must reach to go `live` when the space names none. */
export const DEFAULT_BRANCH = 'main';

/**
 * The service-managed git remote of team-owned spaces (§7): one bare repository per space under
 * `<dataDir>/git/<spaceId>.git`, created on first use, served by `git http-backend`. After a push,
 * each branch that moved is built: the default branch for `live`, others for `br-<slug>`.
 */
export class GitRemotes {
  constructor(
    readonly root: string,
    private readonly builds: BuildService,
  ) {}

  /** The space's remote, or `git_remote_not_available` for spaces without one (anonymous ones). */
  check(space: SpaceRow): void {
    if (space.anonymous || !space.team_id) {
      throw new ApiError(
        'git_remote_not_available',
        'Anonymous spaces have no git remote; claim the space first.',
      );
    }
  }

  defaultBranch(space: SpaceRow): string {
    try {
      const git = space.git ? (JSON.parse(space.git) as { defaultBranch?: string | null }) : null;
      return git?.defaultBranch || DEFAULT_BRANCH;
    } catch {
      return DEFAULT_BRANCH;
    }
  }

  repoPath(spaceId: string): string {
    return path.join(this.root, `${spaceId}.git`);
  }

  /** Creates the bare repository when missing (pushes are accepted; no hooks run). */
  async ensure(space: SpaceRow): Promise<string> {
    const dir = this.repoPath(space.id);
    if (!fs.existsSync(path.join(dir, 'HEAD'))) {
      fs.mkdirSync(this.root, { recursive: true });
      const env = gitEnv(this.root);
      await run('git', ['init', '-q', '--bare', '--template=', '-b', this.defaultBranch(space), dir], {
        env,
      });
      for (const [k, v] of [
        ['http.receivepack', 'true'],
        ['receive.fsckObjects', 'true'],
        ['receive.denyNonFastForwards', 'false'],
        ['core.hooksPath', '/dev/null'],
      ]) {
        await run('git', ['--git-dir', dir, 'config', k!, v!], { env });
      }
    }
    return dir;
  }

  /** Branch → commit of the space's repository. */
  async branches(spaceId: string): Promise<Map<string, string>> {
    const dir = this.repoPath(spaceId);
    if (!fs.existsSync(dir)) return new Map();
    const { stdout } = await run(
      'git',
      ['--git-dir', dir, 'for-each-ref', '--format=%(refname:lstrip=2) %(objectname)', 'refs/heads/'],
      { env: gitEnv(this.root) },
    );
    return new Map(
      stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ') as [string, string]),
    );
  }

  /**
   * Starts a build for each branch a push moved (or records it skipped when the repository
   * connection's auto-deploy flag for it is off, see `BuildService.createFromPush`); a deleted branch other than the default one has its
   * `br-<slug>` channel retired (its host stops serving).
   */
  async afterPush(
    p: Principal,
    space: SpaceRow,
    before: Map<string, string>,
    after: Map<string, string>,
  ): Promise<string[]> {
    const started: string[] = [];
    const main = this.defaultBranch(space);
    for (const [branch, sha] of after) {
      if (before.get(branch) === sha) continue;
      const b = await this.builds.createFromPush(p, space, branch, branch === main ? null : branch, sha);
      started.push(b.id);
    }
    for (const branch of before.keys()) {
      if (after.has(branch) || branch === main) continue;
      await this.builds.retireBranch(space.id, branch);
    }
    return started;
  }
}
