import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import type { EventLog } from '../events/log.ts';
import type { Publisher } from '../publishing/publish.ts';
import type { PublishingService } from '../publishing/service.ts';
import type { Spool } from '../publishing/spool.ts';
import type { VariableService } from '../publishing/variables.ts';
import type { SpaceService } from '../spaces/service.ts';
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
