import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ApiError } from '../../errors/problem.ts';
import type { BuildRow } from '../../store/repos/builds/builds.ts';
import type { BuildLogRow } from '../../store/repos/builds/logs.ts';
import type { Principal } from '../auth/principal.ts';
import type { Scope } from '../auth/scopes.ts';
import { type Actor, actorFromPrincipal, SYSTEM_ACTOR } from '../events/log.ts';
import { readArchive } from '../publishing/archive.ts';
import type { PublishOutcome } from '../publishing/publish.ts';
import { archiveLimitsOf, directorySource } from '../publishing/sources.ts';
import type { SpaceRow } from '../spaces/service.ts';
import { connectionDefaults, productionBranchOf } from './connections.ts';
import { insertBuild, transitionBuild } from './events.ts';
import { followLog } from './follow.ts';
import { checkCloneUrl, checkRef, cloneArgs, gitEnv } from './git.ts';
import { BuildLog, secretForms } from './log.ts';
import {
  BEFORE_RUNNING,
  type BuildDeps,
  BuildFailure,
  type BuildSource,
  branchChannel,
  type CreateBuildInput,
  inside,
  newBuildRow,
  resolveOutput,
  type StoredPrincipal,
  TERMINAL,
} from './model.ts';
import { DEFAULT_LIMITS, type Isolation, runStep, type StepResult } from './process.ts';
import { type ConnectionDefaults, type ResolvedSettings, resolveSettings } from './settings.ts';

/**
 * Builds: made from an uploaded source archive or a git URL at a ref, run one job each (see
 * `run`), their output published through `Publisher.publishFiles` and promoted to `live` (the
 * production branch) or `br-<slug>` (any other branch).
 */
export class BuildService {
  /** Builds running in this process: cancel reaches them at once (other instances poll the row). */
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly d: BuildDeps) {}

  private get root(): string {
    return path.join(this.d.config.dataDir, 'builds');
  }
  /** The bare repository of a space's own remote (see remote.ts). */
  pushRepo(spaceId: string): string {
    return path.join(this.d.config.dataDir, 'git', `${spaceId}.git`);
  }

  /** Where an uploaded source is kept (retries reuse it). */
  sourceDir(buildId: string): string {
    return path.join(this.root, 'sources', buildId);
  }

  async create(p: Principal, space: SpaceRow, input: CreateBuildInput): Promise<BuildRow> {
    const src: BuildSource = input.source ?? { type: 'connection', ref: input.ref ?? null };
    let branch = input.branch ?? null;
    if (src.type === 'git') {
      await checkCloneUrl(src.url, this.d.config.builds.gitAllow);
      if (src.ref) checkRef(src.ref);
    }
    if (src.type === 'connection') {
      const c = await this.d.connections.get(space);
      if (src.ref) checkRef(src.ref);
      src.ref = src.ref || productionBranchOf(c);
      // The production branch goes `live`; any other ref is a branch build unless `branch` says.
      if (input.branch === undefined) branch = src.ref === productionBranchOf(c) ? null : src.ref;
    }
    if (branch) checkRef(branch);
    const now = this.d.clock.now().toISOString();
    const row: BuildRow = {
      ...newBuildRow(p, space, src, branch, now),
      status: src.type === 'upload' ? 'waiting_for_source' : 'queued',
    };
    await insertBuild(this.d.store, this.d.eventLog, row, space, actorFromPrincipal(p));
    if (row.status === 'queued') await this.d.enqueue(row.id);
    return row;
  }

  /**
   * A build for a branch pushed to the space's own remote (no URL policy: the repository is ours).
   * The repository connection's auto-deploy flags decide whether it runs: a push to the production
   * branch (`branch` null) needs `autoDeployProduction`, any other `autoDeployPreviews`; a push they
   * turn away is recorded as a `skipped` build saying why (`auto_deploy_disabled`), which a retry
   * runs. Without a connection every push builds.
   */
  async createFromPush(
    p: Principal,
    space: SpaceRow,
    ref: string,
    branch: string | null,
    commitSha: string | null = null,
  ): Promise<BuildRow> {
    checkRef(ref);
    const now = this.d.clock.now().toISOString();
    const row = newBuildRow(p, space, { type: 'push', ref }, branch, now);
    row.commit_sha = commitSha;
    const c = await this.d.connections.find(space.id);
    const flag = branch === null ? 'autoDeployProduction' : 'autoDeployPreviews';
    if (c && !(branch === null ? c.auto_deploy_production : c.auto_deploy_previews)) {
      Object.assign(row, {
        status: 'skipped',
        error_code: 'auto_deploy_disabled',
        error_message: `Not built: ${flag} is off on the repository connection (push to ${ref}${commitSha ? ` at ${commitSha.slice(0, 12)}` : ''}); retry this build to run it.`,
        finished_at: now,
      } satisfies Partial<BuildRow>);
    }
    await insertBuild(this.d.store, this.d.eventLog, row, space, actorFromPrincipal(p));
    if (row.status === 'queued') await this.d.enqueue(row.id);
    return row;
  }

  /** A build the principal may see (its space resolves for them), or `not_found`. */
  async get(p: Principal, id: string): Promise<{ build: BuildRow; space: SpaceRow }> {
    const build = await this.d.store.repos.builds.byId(id);
    const notFound = () => new ApiError('not_found', `Build ${id} was not found.`);
    if (!build) throw notFound();
    try {
      return { build, space: await this.d.spaces.resolve(p, build.space_id) };
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') throw notFound();
      throw err;
    }
  }

  /**
   * A deleted branch: its unfinished builds are canceled and its `br-<slug>` channel retired (the
   * edge stops serving its host).
   */
  async retireBranch(spaceId: string, branch: string): Promise<boolean> {
    // Its builds still to finish are canceled first, so none brings the channel back.
    for (const id of await this.d.store.repos.builds.unfinishedForBranch(spaceId, branch))
      await this.stop(id);
    return this.d.publishing.channels.retire(spaceId, branchChannel(branch));
  }

  /** The states the build entered, oldest first, each with when. */
  statusChanges(buildId: string) {
    return this.d.store.repos.builds.statusChanges(buildId);
  }

  list(spaceId: string, after: string | null, n: number): Promise<BuildRow[]> {
    return this.d.store.repos.builds.listForSpace(spaceId, after, n);
  }

  logs(buildId: string, after: string | null, n: number): Promise<BuildLogRow[]> {
    return this.d.store.repos.buildLogs.listNewestFirst(buildId, after, n);
  }

  /** The log oldest first as it is written, then the finished build (see follow.ts). */
  follow(buildId: string, signal: AbortSignal) {
    return followLog(this.d.store, buildId, signal);
  }

  /**
   * The source archive of a build made for an upload (zip or tar.gz), expanded under the publish
   * caps into the build's source directory; then the build is queued. A refused archive leaves the
   * build waiting for another.
   */
  async acceptSource(
    p: Principal,
    id: string,
    body: AsyncIterable<Buffer>,
    filename: string,
  ): Promise<BuildRow> {
    const { build } = await this.get(p, id);
    const now = () => this.d.clock.now().toISOString();
    const repo = this.d.store.repos.builds;
    if (
      build.source_type !== 'upload' ||
      !(await repo.transition(id, ['waiting_for_source'], { status: 'uploading_source', updated_at: now() }))
    ) {
      throw new ApiError('build_not_waiting_for_source', `Build ${id} is ${build.status}.`, {
        details: { status: build.status },
      });
    }
    const dir = this.sourceDir(id);
    try {
      await fsp.rm(dir, { recursive: true, force: true });
      await fsp.mkdir(dir, { recursive: true });
      const limits = archiveLimitsOf(this.d.publisher.capsFor(false));
      await readArchive(body, filename, limits, this.d.spool, async (rel, bytes) => {
        const file = path.join(dir, rel);
        if (!file.startsWith(dir + path.sep))
          throw new ApiError('invalid_publish_path', `"${rel}" leaves the source.`);
        await fsp.mkdir(path.dirname(file), { recursive: true });
        const h = await fsp.open(file, 'wx');
        try {
          for await (const chunk of bytes) await h.write(chunk);
        } finally {
          await h.close();
        }
      });
    } catch (err) {
      await fsp.rm(dir, { recursive: true, force: true });
      await repo.transition(id, ['uploading_source'], { status: 'waiting_for_source', updated_at: now() });
      throw err;
    }
    if (!(await repo.transition(id, ['uploading_source'], { status: 'queued', updated_at: now() }))) {
      // Canceled while the archive arrived.
      await fsp.rm(dir, { recursive: true, force: true });
    } else {
      await this.d.enqueue(id);
    }
    return (await repo.byId(id))!;
  }

  /** Cancels a build: at once before it runs, by killing its process group while it runs; a finished build is left as it is. */
  async cancel(p: Principal, id: string): Promise<BuildRow> {
    await this.get(p, id);
    return this.stop(id, actorFromPrincipal(p));
  }

  private async stop(id: string, actor: Actor = SYSTEM_ACTOR): Promise<BuildRow> {
    const repo = this.d.store.repos.builds;
    const now = this.d.clock.now().toISOString();
    if (
      await transitionBuild(
        this.d.store,
        this.d.eventLog,
        id,
        BEFORE_RUNNING,
        {
          status: 'canceled',
          error_code: 'build_canceled',
          error_message: 'Canceled before it ran.',
          finished_at: now,
          updated_at: now,
        },
        actor,
      )
    ) {
      await fsp.rm(this.sourceDir(id), { recursive: true, force: true }).catch(() => {});
    } else if (await repo.transition(id, ['running'], { cancel_requested: 1, updated_at: now })) {
      this.running.get(id)?.abort();
    }
    return (await repo.byId(id))!;
  }

  /** A new build with the same source, branch and target as a finished one. */
  async retry(p: Principal, id: string): Promise<BuildRow> {
    const { build, space } = await this.get(p, id);
    if (!(TERMINAL as readonly string[]).includes(build.status)) {
      throw new ApiError('build_not_terminal', `Build ${id} is ${build.status}.`, {
        details: { status: build.status },
      });
    }
    if (build.source_type === 'upload' && !fs.existsSync(this.sourceDir(id))) {
      throw new ApiError('build_source_missing', `The source of build ${id} is no longer kept.`);
    }
    const source: BuildSource =
      build.source_type === 'git'
        ? { type: 'git', url: build.git_url!, ref: build.git_ref }
        : build.source_type === 'connection'
          ? { type: 'connection', ref: build.git_ref }
          : build.source_type === 'push'
            ? { type: 'push', ref: build.git_ref! }
            : { type: 'upload' };
    const now = this.d.clock.now().toISOString();
    const row: BuildRow = {
      ...newBuildRow(p, space, source, build.branch, now),
      retry_of: build.id,
      status: 'queued',
    };
    if (build.source_type === 'upload')
      await fsp.cp(this.sourceDir(id), this.sourceDir(row.id), { recursive: true });
    await insertBuild(this.d.store, this.d.eventLog, row, space, actorFromPrincipal(p));
    await this.d.enqueue(row.id);
    return row;
  }

  /**
   * Runs one build (the job's work). `signal` aborts it (the job lost its lease, the server stops);
   * a cancel request does the same. Every end is recorded on the build; nothing is thrown for a
   * build that failed, so the job is not retried.
   */
  async run(buildId: string, signal: AbortSignal, heartbeat: () => Promise<void>): Promise<void> {
    const repo = this.d.store.repos.builds;
    const now = () => this.d.clock.now().toISOString();
    const build = await repo.byId(buildId);
    if (!build) return;
    if (build.status === 'running') {
      // A previous delivery died with its server: its work directory is gone with it.
      await transitionBuild(this.d.store, this.d.eventLog, buildId, ['running'], {
        status: 'failed',
        error_code: 'build_interrupted',
        error_message: 'The server running the build stopped; retry it.',
        finished_at: now(),
        updated_at: now(),
      });
      return;
    }
    if (
      !(await repo.transition(buildId, ['queued'], {
        status: 'running',
        started_at: now(),
        updated_at: now(),
      }))
    )
      return;

    const abort = new AbortController();
    this.running.set(buildId, abort);
    const onSignal = () => abort.abort();
    signal.addEventListener('abort', onSignal, { once: true });
    const watch = setInterval(() => {
      repo
        .byId(buildId)
        .then((b) => {
          if (b?.cancel_requested) abort.abort();
        })
        .catch(() => {});
      heartbeat().catch(() => abort.abort());
    }, 500);
    const log = new BuildLog(this.d.store, buildId, []);
    const work = path.join(this.root, 'work', `${buildId}-${randomBytes(4).toString('hex')}`);
    let outcome: { status: string; code: string | null; message: string | null } = {
      status: 'failed',
      code: null,
      message: null,
    };
    let result: { versionId?: string; channel?: string; commit?: string; settings?: ResolvedSettings } = {};
    try {
      result = await this.execute(build, work, log, abort.signal);
      outcome = { status: 'succeeded', code: null, message: null };
    } catch (err) {
      const f =
        err instanceof BuildFailure
          ? err
          : err instanceof ApiError
            ? new BuildFailure(err.code, err.message)
            : new BuildFailure('build_internal_error', 'The build stopped on an internal error.');
      if (!(err instanceof BuildFailure) && !(err instanceof ApiError))
        this.d.log?.error({ err, buildId }, 'build crashed');
      if (abort.signal.aborted && f.status === 'failed' && f.code !== 'build_timed_out') {
        outcome = { status: 'canceled', code: 'build_canceled', message: 'The build was canceled.' };
      } else {
        outcome = { status: f.status, code: f.code, message: f.message };
      }
      log.write('system', `${outcome.status}: ${outcome.message}`);
    } finally {
      clearInterval(watch);
      signal.removeEventListener('abort', onSignal);
      this.running.delete(buildId);
      await log.flush().catch((err) => this.d.log?.warn({ err, buildId }, 'could not store build log lines'));
      await fsp.rm(work, { recursive: true, force: true }).catch(() => {});
    }
    await transitionBuild(this.d.store, this.d.eventLog, buildId, ['running'], {
      status: outcome.status,
      error_code: outcome.code,
      error_message: outcome.message,
      version_id: result.versionId ?? null,
      channel: result.channel ?? null,
      finished_at: now(),
      updated_at: now(),
    });
  }

  private async execute(
    build: BuildRow,
    work: string,
    log: BuildLog,
    signal: AbortSignal,
  ): Promise<{ versionId: string; channel: string }> {
    const repo = this.d.store.repos.builds;
    const space = await this.d.store.repos.spaces.byId(build.space_id);
    if (!space || space.deleted_at) throw new BuildFailure('space_not_found', 'The space is gone.');
    const checkout = path.join(work, 'src');
    const home = path.join(work, 'home');
    const hooks = path.join(work, 'no-hooks');
    await fsp.mkdir(home, { recursive: true });
    await fsp.mkdir(hooks, { recursive: true });
    const startedAt = Date.now();
    let deadline = startedAt + this.d.config.builds.timeoutSeconds * 1000;
    let isolation: Isolation = 'process';
    let caged = false;
    const step = async (
      label: string,
      command: string,
      args: string[],
      cwd: string,
      env: NodeJS.ProcessEnv,
      readOnly: string[] = [],
    ) => {
      log.write('system', `$ ${label}`);
      const r: StepResult = await runStep({
        command,
        args,
        cwd,
        workDir: work,
        readOnly,
        env,
        limits: DEFAULT_LIMITS,
        sandbox: true,
        deadline,
        signal,
        onLine: (s, l) => log.write(s, l),
      });
      isolation = r.isolation;
      caged = r.caged;
      if (r.timedOut)
        throw new BuildFailure(
          'build_timed_out',
          `The build ran past its time limit (${Math.round((deadline - startedAt) / 1000)} s).`,
        );
      if (r.canceled) throw new BuildFailure('build_canceled', 'The build was canceled.', 'canceled');
      if (r.processLimitHit) {
        log.write('system', `${label}: refused to start more than ${DEFAULT_LIMITS.processes} processes`);
        throw new BuildFailure(
          'build_process_limit',
          `The build tried to run more than ${DEFAULT_LIMITS.processes} processes at once (a fork bomb, or a command that forks without bound) and was stopped.`,
        );
      }
      return r;
    };

    // 1. The source.
    let fromConnection: ConnectionDefaults | null = null;
    const cloneSecrets: string[] = [];
    if (build.source_type === 'git' || build.source_type === 'push' || build.source_type === 'connection') {
      let target: {
        url: string;
        pins: string[];
        protocol: 'https' | 'http' | 'file';
        env?: NodeJS.ProcessEnv;
      };
      let label = build.git_url ?? 'the space’s repository';
      if (build.source_type === 'push') {
        target = { url: pathToFileURL(this.pushRepo(build.space_id)).href, pins: [], protocol: 'file' };
      } else if (build.source_type === 'connection') {
        const c = await this.d.connections.find(build.space_id);
        if (!c) throw new BuildFailure('repository_not_connected', 'The space has no repository connection.');
        const clone = await this.d.connections.cloneOf(c);
        target = clone;
        cloneSecrets.push(...clone.secrets);
        log.setSecrets(secretForms(cloneSecrets));
        fromConnection = connectionDefaults(c);
        label = c.clone_url;
      } else {
        target = await checkCloneUrl(build.git_url!, this.d.config.builds.gitAllow);
      }
      const r = await step(
        `git clone --depth 1 ${label}${build.git_ref ? ` (${build.git_ref})` : ''}`,
        'git',
        cloneArgs(target, build.git_ref, checkout, hooks),
        work,
        { ...gitEnv(home), ...target.env },
        target.protocol === 'file' ? [fileURLToPath(target.url)] : [],
      );
      if (r.code !== 0)
        throw new BuildFailure(
          'git_clone_failed',
          `git clone failed (exit ${r.code ?? r.signal}); see the log.`,
        );
      const sha =
        fs
          .readFileSync(path.join(checkout, '.git', 'shallow'), 'utf8')
          .trim()
          .split('\n')[0] ?? null;
      await repo.transition(build.id, null, { commit_sha: sha });
      await fsp.rm(path.join(checkout, '.git'), { recursive: true, force: true });
    } else {
      const src = this.sourceDir(build.id);
      if (!fs.existsSync(src))
        throw new BuildFailure('build_source_missing', 'The build’s source archive is gone.');
      await fsp.cp(src, checkout, { recursive: true });
    }

    // 2. Settings: the space's overlay wins over the repository's file, which wins over detection.
    const overlay = space.config
      ? ((JSON.parse(space.config) as { build?: Record<string, unknown> }).build ?? null)
      : null;
    const { settings, detection } = resolveSettings(
      checkout,
      overlay,
      this.d.config.builds.timeoutSeconds,
      fromConnection,
    );
    deadline = startedAt + Number(settings.timeoutSeconds.value) * 1000;
    await repo.transition(build.id, null, { settings: JSON.stringify({ ...settings, detected: detection }) });
    for (const [k, v] of Object.entries(settings))
      log.write('system', `setting ${k} = ${JSON.stringify(v.value)} (${v.source})`);

    const rootDir = path.resolve(checkout, String(settings.rootDirectory.value ?? '.'));
    if (!inside(checkout, rootDir) || !fs.existsSync(rootDir)) {
      throw new BuildFailure(
        'build_root_invalid',
        `rootDirectory ${settings.rootDirectory.value} is not a folder of the source.`,
      );
    }

    // 3. The environment: the space's variables (secrets included), never the server's own.
    const vars = await this.d.variables.forTemplates(space.id);
    const env: NodeJS.ProcessEnv = {
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: home,
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      CI: '1',
      SPACES_BUILD: '1',
      SPACES_BUILD_ID: build.id,
      SPACES_BRANCH: build.branch ?? '',
      npm_config_cache: path.join(home, '.npm'),
      npm_config_update_notifier: 'false',
    };
    const secrets: string[] = [...cloneSecrets];
    for (const [name, v] of vars) {
      const value = v.secret ? await this.d.variables.reveal(space.id, name) : v.value;
      if (value === null) continue;
      env[name] = value;
      if (v.secret) secrets.push(value);
    }
    log.setSecrets(secretForms(secrets));
    const shell = (label: string, cmd: string) => step(label, 'sh', ['-c', cmd], rootDir, env);

    // 4. Ignored build, install, build.
    if (settings.ignoredBuildCommand.value) {
      const r = await shell(
        String(settings.ignoredBuildCommand.value),
        String(settings.ignoredBuildCommand.value),
      );
      if (r.code === 0)
        throw new BuildFailure('build_skipped', 'ignoredBuildCommand exited 0: nothing to build.', 'skipped');
    }
    for (const key of ['installCommand', 'buildCommand'] as const) {
      const cmd = settings[key].value;
      if (!cmd) continue;
      const r = await shell(String(cmd), String(cmd));
      if (r.code !== 0) {
        throw new BuildFailure(
          key === 'installCommand' ? 'build_install_failed' : 'build_command_failed',
          `${key === 'installCommand' ? 'The install command' : 'The build command'} exited with ${r.code ?? r.signal}.`,
        );
      }
    }
    log.write(
      'system',
      `isolation: ${isolation}; processes ≤ ${DEFAULT_LIMITS.processes} (${caged ? 'pids cgroup' : 'prlimit only'})`,
    );

    // 5. The output, which must be a folder inside the work directory (links resolved).
    const real = await resolveOutput(checkout, rootDir, settings.outputDirectory.value);
    const production = !build.branch;
    const principal = await this.principalOf(build);
    log.write('system', `publishing ${path.relative(checkout, real) || '.'}`);
    // A branch build's version moves its own `br-<slug>` channel, never `live` or `preview`.
    const channel = production ? 'live' : branchChannel(build.branch!);
    const { answer } = await this.d.publisher.publishFiles(
      principal,
      { spaceId: space.id, target: production ? 'production' : 'preview', message: `Build ${build.id}` },
      directorySource(real),
      {
        clientIp: null,
        channel: production ? undefined : channel,
        present: async (o: PublishOutcome) => ({ status: 200, body: o }),
      },
    );
    const versionId = (answer.body as PublishOutcome).version.id;
    log.write('system', `published ${versionId} to ${channel}`);
    return { versionId, channel };
  }

  /** What the build's publish acts as: the principal that started it. */
  private async principalOf(build: BuildRow): Promise<Principal> {
    const s = JSON.parse(build.created_by) as StoredPrincipal;
    return { ...s, scopes: new Set(s.scopes as Scope[]) };
  }
}

export { BUILD_JOB, branchChannel, TERMINAL } from './model.ts';
