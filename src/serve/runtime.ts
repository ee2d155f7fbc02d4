import { createHash } from 'node:crypto';
import { readAtMost } from '../blobs/port.ts';
import { dbBindingHandler } from '../domain/database/db-binding.ts';
import { MAX_BUNDLE_BYTES } from '../domain/runtime/bundle.ts';
import { BindingsChannel } from '../runtime/bindings.ts';
import { RuntimeLogSink } from '../runtime/log-sink.ts';
import { OutboundGuard } from '../runtime/outbound.ts';
import { RuntimePool, type WorkerCode } from '../runtime/pool.ts';
import { StorageBinding } from '../runtime/storage-binding.ts';
import type { Services } from '../services.ts';
import type { VersionRuntimeRow } from '../store/repos/runtime/version-runtimes.ts';
import type { SiteEdge } from './edge.ts';
import { sendSystemPage } from './pages.ts';
import { parseProxyAllowList } from './proxy.ts';
import type { RequestContext } from './request-context.ts';
import type { ServableVersion } from './versions.ts';
import { backendAuthorization, VISITOR_TOKEN_HEADER } from './visitor-token-header.ts';

/** How long a space's variables are reused before they are read again (a change then takes effect). */
const ENV_TTL_MS = 2_000;
const MAX_CACHED_ROWS = 4096;

/**
 * The edge's side of functions (issue 26): a request the engine routed to the worker (a miss on a
 * claimed route) is streamed to the version's workerd process from the pool, with the space's
 * variables and secrets as `env`. One per server (see {@link edgeRuntime}); the pool stops with it.
 */
export class EdgeRuntime {
  readonly pool: RuntimePool;
  /** The bindings channel the workers reach (`env.DB`; another binding is one `register` call). */
  readonly bindings: BindingsChannel;
  private readonly rows = new Map<string, Promise<VersionRuntimeRow | null>>();
  private readonly envs = new Map<string, { at: number; env: Record<string, string>; digest: string }>();

  constructor(private readonly services: Services) {
    const { config, log } = services;
    const bindings = new BindingsChannel();
    bindings.register('db', dbBindingHandler(services.spaceDbs));
    this.bindings = bindings;
    this.pool = new RuntimePool({
      bindings,
      timeoutMs: config.functionsTimeoutMs,
      idleMs: config.functionsIdleMs,
      outbound: new OutboundGuard(parseProxyAllowList(config.proxyAllow)),
      logs: new RuntimeLogSink((source, events) => services.runtimeLogs.record(source, events)),
      storage: new StorageBinding(services.storage),
      log,
    });
    services.onClose.push(() => this.pool.close());
  }

  private row(spaceId: string, versionId: string): Promise<VersionRuntimeRow | null> {
    let r = this.rows.get(versionId);
    if (!r) {
      if (this.rows.size >= MAX_CACHED_ROWS) this.rows.clear();
      r = this.services.store.repos.versionRuntimes.get(spaceId, versionId);
      this.rows.set(versionId, r);
      r.catch(() => this.rows.delete(versionId));
    }
    return r;
  }

  private async env(spaceId: string): Promise<{ env: Record<string, string>; digest: string }> {
    const now = Date.now();
    const hit = this.envs.get(spaceId);
    if (hit && now - hit.at < ENV_TTL_MS) return hit;
    const env = await this.services.variables.forRuntime(spaceId);
    const digest = createHash('sha256').update(JSON.stringify(env)).digest('hex').slice(0, 16);
    const entry = { at: now, env, digest };
    if (this.envs.size >= MAX_CACHED_ROWS) this.envs.clear();
    this.envs.set(spaceId, entry);
    return entry;
  }

  async serve(edge: SiteEdge, ctx: RequestContext, version: ServableVersion): Promise<void> {
    const { req, res, space } = ctx;
    const row = await this.row(space.id, version.id);
    if (!row) return sendSystemPage(req, res, { kind: 'not-found', path: ctx.rawPath });
    const { env, digest } = await this.env(space.id);
    const load = async (): Promise<WorkerCode> => ({
      spaceId: space.id,
      versionId: version.id,
      entry: row.entry_kind === 'functions' || row.entry.endsWith('/') ? null : row.entry,
      routes: JSON.parse(row.routes) as string[],
      bundle: await readAtMost(
        await this.services.blobs.get(row.bundle_sha256),
        MAX_BUNDLE_BYTES,
        () => new Error('functions bundle larger than its limit'),
      ),
      compatibilityDate: row.compatibility_date,
      env,
      fetch: (JSON.parse(row.capabilities) as string[]).includes('fetch'),
    });
    const ip = this.services.clientAddresses.clientAddress(req);
    await this.pool.forward(`${version.id}:${digest}`, load, req, res, {
      host: req.headers.host ?? ctx.hostname,
      url: ctx.url,
      headers: {
        'x-forwarded-for': ip,
        'x-forwarded-proto': edge.protoOf(req),
        [VISITOR_TOKEN_HEADER]: backendAuthorization(this.services, ctx),
      },
    });
  }
}

const runtimes = new WeakMap<Services, EdgeRuntime>();

/** The server's functions runtime, made on the first request a worker answers. */
export function edgeRuntime(services: Services): EdgeRuntime {
  let r = runtimes.get(services);
  if (!r) {
    r = new EdgeRuntime(services);
    runtimes.set(services, r);
  }
  return r;
}

/** The edge's one call: a request the engine routed to the version's worker. */
export function serveWorker(edge: SiteEdge, ctx: RequestContext, version: ServableVersion): Promise<void> {
  return edgeRuntime(edge.services).serve(edge, ctx, version);
}
