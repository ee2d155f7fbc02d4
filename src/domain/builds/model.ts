import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { newId } from '../../ids.ts';
import type { BuildRow } from '../../store/repos/builds/builds.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import type { EventLog } from '../events/log.ts';
import type { Publisher } from '../publishing/publish.ts';
import type { PublishingService } from '../publishing/service.ts';
import type { Spool } from '../publishing/spool.ts';
import type { VariableService } from '../publishing/variables.ts';
import type { SpaceRow, SpaceService } from '../spaces/service.ts';
import type { RepositoryConnectionService } from './connections.ts';

/** The words of builds: states, sources, what the service is built from, the failure it records. */
export const TERMINAL = ['succeeded', 'failed', 'canceled', 'skipped'] as const;
export const BEFORE_RUNNING = ['waiting_for_source', 'uploading_source', 'queued'] as const;
export const BUILD_JOB = 'builds.run';

export type BuildSource =
  | { type: 'upload' }
  | { type: 'git'; url: string; ref?: string | null }
  /** The space's repository connection at a ref (default: its production branch). */
  | { type: 'connection'; ref?: string | null }
  /** A push to the space's own remote: cloned from its bare repository at the branch pushed. */
  | { type: 'push'; ref: string };

export interface CreateBuildInput {
  /** Absent: the space's repository connection at `ref`. */
  source?: BuildSource;
  /** The ref to build from the connection when `source` is absent. */
  ref?: string | null;
  /** The branch the build is for: null or absent is the production branch (`live`). */
  branch?: string | null;
}

export interface BuildDeps {
  store: Store;
  clock: Clock;
  config: Config;
  spaces: SpaceService;
  variables: VariableService;
  publishing: PublishingService;
  publisher: Publisher;
  spool: Spool;
  connections: RepositoryConnectionService;
  /** Queues a build's run (the job queue, given by whoever wires the service). */
  enqueue: (buildId: string) => Promise<void>;
  log?: Logger;
  /** The event log: build created/succeeded/failed/canceled/skipped, with the build's change. */
  eventLog?: EventLog;
}

/** `br-<slug>`: the branch name with anything but `a-z0-9-` as `-`, at most 16 characters (§6). */
export function branchChannel(branch: string): string {
  const slug = branch
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 16)
    .replace(/-$/, '');
  return `br-${slug || 'branch'}`;
}

export interface StoredPrincipal extends Omit<Principal, 'scopes'> {
  scopes: string[];
}

export class BuildFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: 'failed' | 'canceled' | 'skipped' = 'failed',
  ) {
    super(message);
  }
}

export function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** A new build's row (state `queued`; callers change what differs). */
export function newBuildRow(
  p: Principal,
  space: SpaceRow,
  src: BuildSource,
  branch: string | null,
  now: string,
): BuildRow {
  return {
    id: newId('bld'),
    tenant_id: space.tenant_id,
    space_id: space.id,
    status: 'queued',
    source_type: src.type,
    git_url: src.type === 'git' ? src.url : null,
    git_ref: src.type === 'upload' ? null : (src.ref ?? null),
    branch,
    commit_sha: null,
    channel: null,
    settings: null,
    error_code: null,
    error_message: null,
    version_id: null,
    retry_of: null,
    cancel_requested: 0,
    log_bytes: 0,
    created_by: JSON.stringify({ ...p, scopes: [...p.scopes] } satisfies StoredPrincipal),
    created_at: now,
    updated_at: now,
    started_at: null,
    finished_at: null,
  };
}

/**
 * The build's output folder with links resolved: it must exist and be a folder inside the source
 * (`build_output_missing`, `build_output_outside` otherwise).
 */
export async function resolveOutput(
  checkout: string,
  rootDir: string,
  outputDirectory: string | number | null,
): Promise<string> {
  const out = path.resolve(rootDir, String(outputDirectory ?? '.'));
  let real: string;
  try {
    real = await fsp.realpath(out);
  } catch {
    throw new BuildFailure(
      'build_output_missing',
      `The output directory ${outputDirectory} does not exist after the build.`,
    );
  }
  if (!inside(await fsp.realpath(checkout), real) || !(await fsp.stat(real)).isDirectory()) {
    throw new BuildFailure(
      'build_output_outside',
      `The output directory ${outputDirectory} is not a folder inside the build's source.`,
    );
  }
  return real;
}
