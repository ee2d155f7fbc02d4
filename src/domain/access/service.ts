import type { Clock } from '../../clock.ts';
import { ApiError } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import type { GrantCheckInput, GrantCheckView, GrantInput, GrantView } from '../../schemas/access.ts';
import type { GrantRow } from '../../store/repos/access/grants.ts';
import type { Repositories, Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import { actorFromPrincipal, tenantOfSpace } from '../events/log.ts';
import type { DomainEvents } from '../events.ts';
import { HostsResolver } from '../hosts/resolve.ts';
import { configGrants } from './config.ts';
import { compileGrant, decide, validRange } from './matcher.ts';
import type { Audience, Capability, Grant, ServedTarget, Visitor } from './model.ts';
import { pathsProblem } from './paths.ts';
import { grantOf, presentGrant } from './rows.ts';

/** The space a change is made to (a `spaces` row or the edge's view of one). */
export interface AccessSpace {
  id: string;
  team_id: string | null;
  slug: string;
  access: string;
}

/**
 * The space's own `access` (`private|team|public`) as a grant of the same engine: `public` opens
 * every path to anyone; `team`/`private` let in visitors the API's hand-off signed in (the hand-off
 * checks team membership, and for `private` the owners), who get the `team` audience.
 */
export function spaceAccessGrant(access: string): Grant {
  return access === 'public'
    ? {
        id: 'space_access',
        audience: { type: 'public' },
        paths: ['/**'],
        role: 'viewer',
        target: 'all-versions',
        constraints: {},
        uses: 0,
      }
    : {
        id: 'space_access',
        audience: { type: 'team' },
        paths: ['/**'],
        role: 'manager',
        target: 'all-versions',
        constraints: {},
        uses: 0,
      };
}

function invalid(detail: string, pointer: string): never {
  throw new ApiError('invalid_grant', detail, { pointer });
}

/** Checks what the schema cannot (glob grammar, addresses, instants); answers the normalised grant fields. */
export function checkGrantInput(input: GrantInput, allowCredentialAudience = false) {
  const paths = input.paths ?? ['/**'];
  const p = pathsProblem(paths);
  if (p) invalid(`Paths: ${p.reason}.`, `/paths/${p.index}`);
  const a = input.audience;
  if (!allowCredentialAudience && (a.type === 'link' || a.type === 'password' || a.type === 'machine'))
    invalid(
      `A ${a.type} grant is made with its credential (POST …/${a.type === 'link' ? 'share-links' : `${a.type}-credentials`}).`,
      '/audience/type',
    );
  if (a.type === 'person' && !a.userId && !a.email)
    invalid('A person grant names a userId or an email.', '/audience');
  const c = input.constraints ?? {};
  c.ip?.forEach((r, i) => {
    if (!validRange(r)) invalid(`"${r}" is not an IP address or CIDR range.`, `/constraints/ip/${i}`);
  });
  for (const k of ['notBefore', 'expiresAt'] as const) {
    if (c[k] !== undefined && Number.isNaN(Date.parse(c[k]!)))
      invalid(`${k} is not an instant.`, `/constraints/${k}`);
  }
  if (c.notBefore && c.expiresAt && Date.parse(c.notBefore) >= Date.parse(c.expiresAt))
    invalid('expiresAt is not after notBefore.', '/constraints/expiresAt');
  const { maxUses, ...rest } = c;
  return {
    audience: a as Audience,
    paths,
    role: input.role ?? 'viewer',
    target: input.target ?? 'live',
    constraints: rest,
    maxUses: maxUses ?? null,
    note: input.note ?? null,
  };
}

export interface AccessServiceDeps {
  store: Store;
  clock: Clock;
  events: DomainEvents;
  baseDomain: string;
}

/**
 * Grants of a space (behaviour §3.4): list, create, replace, revoke — each change recorded as a
 * `space.grant_*` event in its transaction, and every change tells the edges (`spaceChanged`, over
 * the change feed to other instances) so they drop what they cached for the space. `check` answers
 * "would this visitor see this URL, and through which grant" with the engine the edge runs.
 */
export class AccessService {
  private readonly hosts: HostsResolver;

  constructor(readonly deps: AccessServiceDeps) {
    this.hosts = new HostsResolver(deps.store.repos.siteHosts, deps.baseDomain);
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  /** Runs a change and its event in one transaction; the edges hear of it after the commit. */
  async change<T>(
    space: AccessSpace,
    p: Principal | null,
    fn: (
      repos: Repositories,
    ) => Promise<{ result: T; code: string; message: string; details: Record<string, unknown> }>,
  ): Promise<T> {
    const out = await this.deps.store.transaction(async (repos) => {
      const r = await fn(repos);
      await this.deps.events.log.record(repos, {
        tenantId: tenantOfSpace(space),
        spaceId: space.id,
        actor: actorFromPrincipal(p),
        code: r.code,
        message: r.message,
        details: r.details,
      });
      return r.result;
    });
    this.deps.events.spaceChanged(space.id);
    return out;
  }

  async list(space: AccessSpace): Promise<GrantView[]> {
    return (await this.deps.store.repos.grants.activeForSpace(space.id)).map(presentGrant);
  }

  async get(space: AccessSpace, id: string): Promise<GrantView> {
    const row = await this.deps.store.repos.grants.byId(space.id, id);
    if (!row || row.revoked_at) throw new ApiError('grant_not_found', `Grant ${id} was not found.`);
    return presentGrant(row);
  }

  /** A new grant row (also used by share links and credentials, in their transaction). */
  newRow(
    space: AccessSpace,
    p: Principal | null,
    fields: ReturnType<typeof checkGrantInput>,
    credentialId: string | null = null,
  ): GrantRow {
    const now = this.now();
    return {
      id: newId('grt'),
      space_id: space.id,
      audience_type: fields.audience.type,
      audience: JSON.stringify(fields.audience),
      paths: JSON.stringify(fields.paths),
      role: fields.role,
      target: fields.target,
      constraints: JSON.stringify(fields.constraints),
      max_uses: fields.maxUses,
      uses: 0,
      credential_id: credentialId,
      note: fields.note,
      created_by: p && 'userId' in p ? ((p as { userId?: string | null }).userId ?? null) : null,
      created_at: now,
      updated_at: now,
      revoked_at: null,
    };
  }

  async create(p: Principal, space: AccessSpace, input: GrantInput): Promise<GrantView> {
    const fields = checkGrantInput(input);
    const row = this.newRow(space, p, fields);
    return this.change(space, p, async (repos) => {
      await repos.grants.insert(row);
      return {
        result: presentGrant(row),
        code: 'space.grant_created',
        message: `A ${fields.role} grant for ${fields.audience.type} was added to ${space.slug}.`,
        details: {
          grantId: row.id,
          audience: fields.audience.type,
          role: fields.role,
          paths: fields.paths,
          target: fields.target,
        },
      };
    });
  }

  async replace(p: Principal, space: AccessSpace, id: string, input: GrantInput): Promise<GrantView> {
    const existing = await this.deps.store.repos.grants.byId(space.id, id);
    if (!existing || existing.revoked_at) throw new ApiError('grant_not_found', `Grant ${id} was not found.`);
    // A credential's grant keeps its audience (the credential); everything else may change.
    const fields = checkGrantInput(
      existing.credential_id ? { ...input, audience: JSON.parse(existing.audience) } : input,
      existing.credential_id !== null,
    );
    const at = this.now();
    return this.change(space, p, async (repos) => {
      const ok = await repos.grants.update(space.id, id, {
        audience_type: fields.audience.type,
        audience: JSON.stringify(fields.audience),
        paths: JSON.stringify(fields.paths),
        role: fields.role,
        target: fields.target,
        constraints: JSON.stringify(fields.constraints),
        max_uses: fields.maxUses,
        note: fields.note,
        updated_at: at,
      });
      if (!ok) throw new ApiError('grant_not_found', `Grant ${id} was not found.`);
      const row = (await repos.grants.byId(space.id, id))!;
      return {
        result: presentGrant(row),
        code: 'space.grant_updated',
        message: `Grant ${id} of ${space.slug} was changed.`,
        details: {
          grantId: id,
          audience: fields.audience.type,
          role: fields.role,
          paths: fields.paths,
          target: fields.target,
        },
      };
    });
  }

  async revoke(p: Principal, space: AccessSpace, id: string): Promise<void> {
    const at = this.now();
    await this.change(space, p, async (repos) => {
      const row = await repos.grants.byId(space.id, id);
      if (!row || !(await repos.grants.revoke(space.id, id, at)))
        throw new ApiError('grant_not_found', `Grant ${id} was not found.`);
      // A credential's grant goes with its credential.
      if (row.credential_id) await repos.accessCredentials.revoke(space.id, row.credential_id, at);
      return {
        result: undefined,
        code: 'space.grant_revoked',
        message: `Grant ${id} of ${space.slug} was revoked.`,
        details: { grantId: id, audience: row.audience_type },
      };
    });
  }

  /** `sharing/logout-all`: every visitor session of the space ends (the epoch they carry moves on). */
  async logoutAll(p: Principal, space: AccessSpace): Promise<{ epoch: number }> {
    const at = this.now();
    return this.change(space, p, async (repos) => {
      const epoch = await repos.accessEpochs.bump(space.id, at);
      return {
        result: { epoch },
        code: 'space.access_logout_all',
        message: `Every visitor session of ${space.slug} was ended.`,
        details: { epoch },
      };
    });
  }

  /** What the URL serves on this space: path and target; refused when it is another site's URL. */
  private async locate(
    space: AccessSpace,
    url: string,
  ): Promise<{ path: string; target: ServedTarget; versionId: string | null }> {
    const bad = (why: string): never => {
      throw new ApiError('invalid_access_check', why, { pointer: '/url', details: { in: 'query' } });
    };
    const channels = await this.deps.store.repos.siteHosts.channelVersions(space.id);
    if (url.startsWith('/')) {
      const path = new URL(url, 'http://x').pathname;
      return {
        path,
        target: { kind: 'live', versionId: channels.live ?? null },
        versionId: channels.live ?? null,
      };
    }
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return bad('The url is neither a path nor an absolute URL.');
    }
    const found = await this.hosts.resolve(u.hostname.toLowerCase());
    if (found.kind !== 'site' || found.space.id !== space.id)
      return bad('The url is not on one of this space’s hostnames.');
    const path = decodeURI(u.pathname);
    if (found.versionId)
      return { path, target: { kind: 'version', id: found.versionId }, versionId: found.versionId };
    const versionId = found.space.channels[found.channel] ?? null;
    return {
      path,
      target:
        found.channel === 'live'
          ? { kind: 'live', versionId }
          : { kind: 'branch', name: found.channel, versionId },
      versionId,
    };
  }

  async check(space: AccessSpace, q: GrantCheckInput): Promise<GrantCheckView> {
    const where = await this.locate(space, q.url);
    const capability = (q.capability ?? 'page.view') as Capability;
    const credential = q.credential ? /^(link|password|machine):(.+)$/.exec(q.credential) : null;
    if (q.credential && !credential)
      throw new ApiError(
        'invalid_access_check',
        'credential is `link:<id>`, `password:<id>` or `machine:<id>`.',
        {
          pointer: '/credential',
          details: { in: 'query' },
        },
      );
    const visitor: Visitor = {
      userId: q.userId ?? null,
      teamMember: q.teamMember ?? false,
      email: q.email ?? null,
      emailVerified: q.emailVerified ?? false,
      credentials: credential ? [{ type: credential[1] as 'link', id: credential[2]! }] : [],
      ip: q.ip ?? null,
      country: q.country ?? null,
      userAgent: q.userAgent ?? null,
    };
    const version = where.versionId
      ? await this.deps.store.repos.servableVersions.readyById(where.versionId)
      : null;
    const config = version?.config ? (JSON.parse(version.config) as Record<string, unknown>) : null;
    const stored = (await this.deps.store.repos.grants.activeForSpace(space.id)).map(grantOf);
    const all = [spaceAccessGrant(space.access), ...configGrants(config), ...stored];
    const d = decide(all.map(compileGrant), visitor, {
      path: where.path,
      target: where.target,
      capability,
      now: q.at ? new Date(q.at) : this.deps.clock.now(),
    });
    const via = !d.grant
      ? null
      : d.grant.id === 'space_access'
        ? 'space_access'
        : d.grant.id === 'config'
          ? 'config'
          : 'grant';
    const t = where.target;
    return {
      allowed: d.allowed,
      via,
      grantId: via === 'grant' ? d.grant!.id : null,
      path: where.path,
      target: t.kind === 'live' ? 'live' : t.kind === 'branch' ? `branch:${t.name}` : `version:${t.id}`,
      capability,
      misses: d.misses.filter((m) => m.grantId !== 'space_access' && m.grantId !== 'config'),
    };
  }
}
