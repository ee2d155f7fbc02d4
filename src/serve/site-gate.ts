import { configGrants } from '../domain/access/config.ts';
import { tokenHash } from '../domain/access/credentials.ts';
import { type CompiledGrant, compileGrant, firstMatch, missOf } from '../domain/access/matcher.ts';
import type { Grant, ServedTarget, Visitor } from '../domain/access/model.ts';
import { grantOf } from '../domain/access/rows.ts';
import { spaceAccessGrant } from '../domain/access/service.ts';
import type { Services } from '../services.ts';
import { locationValue } from '../site/field.ts';
import type { AccessCredentialRow } from '../store/repos/access/credentials.ts';
import { ACCESS_COOKIE, verifySiteToken } from './access.ts';
import { parseCookies } from './cookies.ts';
import type { RequestContext } from './request-context.ts';
import { machineToken, readSession, sessionCookie } from './visitor-session.ts';

/**
 * The edge's side of site access: per space, the stored grants (compiled), the live credentials and
 * the session epoch, cached until the space changes (any access change calls `spaceChanged`, which
 * reaches every instance through the change feed) or a minute passes. From a request it builds the
 * visitor (team hand-off cookie, share-link/password session, machine header) and asks the one
 * matcher, together with the space's own access and the version's `access` key.
 */
export interface GateState {
  spaceId: string;
  epoch: number;
  /** Grants for per-request decisions: a link's or password's use limit counts sessions, not requests. */
  grants: CompiledGrant[];
  /** The same grants as stored (use limits intact), by id: for starting a session. */
  byId: Map<string, Grant>;
  credentials: Map<string, AccessCredentialRow>;
  byHash: Map<string, AccessCredentialRow>;
  passwords: AccessCredentialRow[];
  /** People of the space (not removed) by id → their address: a person session names the id. */
  people: Map<string, string>;
  /** Some grant needs the client address or country. */
  network: boolean;
  /** Some stored grant is public (a visitor with nothing may still get in). */
  publicGrant: boolean;
  loadedAt: number;
}

const STATE_TTL_MS = 60_000;
/** People of one space the edge keeps at hand (a person session beyond them is not honoured). */
const MAX_PEOPLE = 5000;
const SPACE_PUBLIC = compileGrant(spaceAccessGrant('public'));
const SPACE_TEAM = compileGrant(spaceAccessGrant('team'));
const compiledConfig = new WeakMap<Grant[], CompiledGrant[]>();
/** The last grant list built per gate state (a new state, on any access change, starts afresh). */
const grantLists = new WeakMap<
  GateState,
  { compiled: CompiledGrant[]; access: string; list: CompiledGrant[] }
>();

export interface GateVisitor {
  visitor: Visitor;
  /** The visitor holds something (team hand-off, session, machine token). */
  identified: boolean;
  state: GateState;
}

export function servedTarget(ctx: RequestContext, versionId: string): ServedTarget {
  return servedTargetOf(ctx.target as { versionId: string | null; channel: string }, versionId);
}

export function servedTargetOf(
  t: { versionId: string | null; channel: string },
  versionId: string,
): ServedTarget {
  if (t.versionId) return { kind: 'version', id: t.versionId };
  return t.channel === 'live' ? { kind: 'live', versionId } : { kind: 'branch', name: t.channel, versionId };
}

export class SiteGate {
  private readonly states = new Map<string, GateState>();
  private readonly loading = new Map<string, Promise<GateState>>();

  constructor(
    private readonly services: Services,
    private readonly secret: Buffer,
  ) {
    services.events.onSpaceChanged((id) => this.invalidate(id));
  }

  invalidate(spaceId: string): void {
    this.states.delete(spaceId);
    this.loading.delete(spaceId);
  }

  peek(spaceId: string): GateState | null {
    const s = this.states.get(spaceId);
    if (!s) return null;
    if (this.services.clock.now().getTime() - s.loadedAt > STATE_TTL_MS) {
      this.states.delete(spaceId);
      return null;
    }
    return s;
  }

  load(spaceId: string): Promise<GateState> {
    let p = this.loading.get(spaceId);
    if (!p) {
      p = this.fetch(spaceId).finally(() => this.loading.delete(spaceId));
      this.loading.set(spaceId, p);
    }
    return p;
  }

  private async fetch(spaceId: string): Promise<GateState> {
    const repos = this.services.store.repos;
    const [rows, creds, epoch, people] = await Promise.all([
      repos.grants.activeForSpace(spaceId),
      repos.accessCredentials.allForSpace(spaceId),
      repos.accessEpochs.get(spaceId),
      repos.spacePeople.list(spaceId, null, MAX_PEOPLE),
    ]);
    const stored = rows.map(grantOf);
    const perRequest = stored.map((g) => {
      if (g.constraints.maxUses === undefined || g.audience.type === 'machine') return g;
      const { maxUses: _, ...rest } = g.constraints;
      return { ...g, constraints: rest };
    });
    const credentials = new Map(creds.map((c) => [c.id, c]));
    const state: GateState = {
      spaceId,
      epoch,
      grants: perRequest.map(compileGrant),
      byId: new Map(stored.map((g) => [g.id, g])),
      credentials,
      byHash: new Map(creds.filter((c) => c.kind !== 'password').map((c) => [c.secret_hash, c])),
      passwords: creds.filter((c) => c.kind === 'password'),
      people: new Map(people.map((p) => [p.id, p.email])),
      network: stored.some(
        (g) => !!(g.constraints.ip || g.constraints.countryAllow || g.constraints.countryDeny),
      ),
      publicGrant: stored.some((g) => g.audience.type === 'public'),
      loadedAt: this.services.clock.now().getTime(),
    };
    // A change that arrived while loading dropped the promise: keep the answer only if still wanted.
    if (this.loading.has(spaceId)) this.states.set(spaceId, state);
    return state;
  }

  /** Who is asking, from the request's cookies and headers (everything verified). */
  visitorOf(ctx: RequestContext, state: GateState): GateVisitor {
    const gv = this.visitorFrom(ctx.req.headers, ctx.hostname, ctx.space.id, state);
    if (state.network) gv.visitor.ip = this.services.clientAddresses.clientAddress(ctx.req);
    return gv;
  }

  /** The visitor from request headers alone (the fast lane has no socket: no address-bound grants there). */
  visitorFrom(
    headers: Record<string, string | string[] | undefined>,
    hostname: string,
    spaceId: string,
    state: GateState,
  ): GateVisitor {
    const space = { id: spaceId };
    const now = this.services.clock.now().getTime();
    const visitor: Visitor = { credentials: [], userAgent: (headers['user-agent'] as string) ?? null };
    let identified = false;
    const cookieHeader = headers.cookie as string | undefined;
    if (cookieHeader?.includes(ACCESS_COOKIE)) {
      const t = verifySiteToken(
        this.secret,
        'access',
        hostname,
        parseCookies(cookieHeader).get(ACCESS_COOKIE),
        now,
      );
      if (t && t.spaceId === space.id) {
        // `<user>:<epoch>` from a hand-off; internal tokens (thumbnails) carry no epoch and live minutes.
        const colon = t.subject.lastIndexOf(':');
        const epoch = colon === -1 ? null : Number(t.subject.slice(colon + 1));
        if (epoch === null || epoch === state.epoch) {
          visitor.teamMember = true;
          visitor.userId = colon === -1 ? t.subject : t.subject.slice(0, colon);
          identified = true;
        }
      }
    }
    const s = readSession(this.secret, hostname, cookieHeader, now);
    if (s?.kind === 'person' && s.spaceId === space.id && s.epoch === state.epoch) {
      // A person's session: their address, proven by the mailed link; their grants are person grants.
      const email = state.people.get(s.credentialId);
      if (email) {
        visitor.email = email;
        visitor.emailVerified = true;
        identified = true;
      }
    } else if (s && s.kind !== 'person' && s.spaceId === space.id && s.epoch === state.epoch) {
      const cred = state.credentials.get(s.credentialId);
      if (cred && cred.kind === s.kind && cred.generation === s.generation) {
        visitor.credentials!.push({ type: s.kind, id: cred.id });
        identified = true;
      }
    }
    const token = machineToken({ headers: headers as Record<string, string> });
    if (token) {
      const cred = state.byHash.get(tokenHash(token));
      if (cred?.kind === 'machine') {
        visitor.credentials!.push({ type: 'machine', id: cred.id });
        identified = true;
      }
    }
    return { visitor, identified, state };
  }

  /** Every grant that applies to this space and version, in preference order. */
  grantsFor(access: string, config: Record<string, unknown> | null, state: GateState): CompiledGrant[] {
    const fromConfig = configGrants(config);
    let compiled = compiledConfig.get(fromConfig);
    if (!compiled) {
      compiled = fromConfig.map(compileGrant);
      compiledConfig.set(fromConfig, compiled);
    }
    // The same list for every request while the state, the settings and the space's access stay.
    const memo = grantLists.get(state);
    if (memo && memo.compiled === compiled && memo.access === access) return memo.list;
    const list = [access === 'public' ? SPACE_PUBLIC : SPACE_TEAM, ...compiled, ...state.grants];
    grantLists.set(state, { compiled, access, list });
    return list;
  }

  /** Counts a machine request against its grant's use limit (false: none left). */
  async countMachineUse(grant: Grant): Promise<boolean> {
    if (grant.audience.type !== 'machine' || grant.constraints.maxUses === undefined) return true;
    // The store's counter decides (atomic across requests and instances).
    return this.services.store.repos.grants.consumeUse(grant.id);
  }

  /**
   * `?__=<token>` on a share link: a session for the link (a use counted when the link has a limit),
   * then a redirect to the same URL without the token. False when the token opens nothing here.
   */
  async redeemLink(ctx: RequestContext, state: GateState, token: string, https: boolean): Promise<boolean> {
    const cred = state.byHash.get(tokenHash(token));
    if (cred?.kind !== 'link') return false;
    const grant = state.byId.get(cred.grant_id);
    if (!grant) return false;
    const now = this.services.clock.now();
    const compiled = compileGrant(grant);
    const miss = missOf(
      compiled,
      { credentials: [{ type: 'link', id: cred.id }] },
      {
        path: '/',
        target: { kind: 'live', versionId: null },
        capability: 'page.view',
        now,
      },
    );
    if (miss && miss !== 'path' && miss !== 'target') return false;
    if (grant.constraints.maxUses !== undefined) {
      if (!(await this.services.store.repos.grants.consumeUse(grant.id))) return false;
    }
    void this.services.store.repos.accessCredentials.touch(cred.id, now.toISOString()).catch(() => {});
    const query = ctx.query();
    query.delete('__');
    const rest = query.toString();
    ctx.res.writeHead(303, {
      location: locationValue(`${ctx.rawPath}${rest ? `?${rest}` : ''}`),
      'set-cookie': sessionCookie(
        this.secret,
        ctx.hostname,
        https,
        {
          spaceId: state.spaceId,
          kind: 'link',
          credentialId: cred.id,
          generation: cred.generation,
          epoch: state.epoch,
        },
        now.getTime(),
      ),
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
    });
    ctx.res.end();
    return true;
  }

  /**
   * `/__service/person?token=…`, the link a person's invitation mails: a person session for this space,
   * then a redirect to the site's front page. False when the token is wrong, expired or not this
   * space's. The token stays valid until it expires or is replaced (a mail scanner opening it first
   * does not use it up).
   */
  async redeemPersonLink(
    ctx: RequestContext,
    state: GateState,
    token: string,
    https: boolean,
  ): Promise<boolean> {
    const person = await this.services.people.signIn(state.spaceId, token);
    if (!person) return false;
    // The edge's list of people was read before this person existed, perhaps: read it again.
    if (!state.people.has(person.id)) this.invalidate(state.spaceId);
    const now = this.services.clock.now();
    ctx.res.writeHead(303, {
      location: '/',
      'set-cookie': sessionCookie(
        this.secret,
        ctx.hostname,
        https,
        {
          spaceId: state.spaceId,
          kind: 'person',
          credentialId: person.id,
          generation: 1,
          epoch: state.epoch,
        },
        now.getTime(),
      ),
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
    });
    ctx.res.end();
    return true;
  }

  /** Password credentials whose grant would let this visitor in, were the password known. */
  passwordsFor(
    gv: GateVisitor,
    grants: CompiledGrant[],
    path: string,
    target: ServedTarget,
  ): AccessCredentialRow[] {
    const now = this.services.clock.now();
    const out: AccessCredentialRow[] = [];
    for (const cred of gv.state.passwords) {
      const g = grants.find((x) => x.grant.id === cred.grant_id);
      if (!g) continue;
      const v: Visitor = { ...gv.visitor, credentials: [{ type: 'password', id: cred.id }] };
      if (firstMatch([g], v, { path, target, capability: 'page.view', now })) out.push(cred);
    }
    return out;
  }
}
