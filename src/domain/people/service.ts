import type { Clock } from '../../clock.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId, newToken } from '../../ids.ts';
import type { GrantRow } from '../../store/repos/access/grants.ts';
import type { Repositories, Store } from '../../store/repos/index.ts';
import type { PersonRow } from '../../store/repos/people/people.ts';
import type { AccessRequestRow } from '../../store/repos/people/requests.ts';
import { pathsProblem } from '../access/paths.ts';
import type { Principal } from '../auth/principal.ts';
import { hashToken } from '../auth/tokens.ts';
import { actorFromPrincipal, tenantOfSpace } from '../events/log.ts';
import type { DomainEvents } from '../events.ts';
import type { MailOutbox } from '../mail/outbox.ts';
import type { SpaceRow } from '../spaces/service.ts';
import { personInvitationMail, requestVerificationMail } from './mail.ts';

/** How long a person's sign-in link works (a resend makes a new one). */
export const PERSON_LINK_TTL_MS = 7 * 24 * 3600_000;
/** How long a request's confirmation link works. */
export const REQUEST_VERIFY_TTL_MS = 24 * 3600_000;
export const PERSON_TOKEN_PREFIX = 'sppl_';
export const REQUEST_TOKEN_PREFIX = 'sprq_';
/** Where the links land on the site's own host (the edge answers them). */
export const PERSON_LINK_PATH = '/__service/person';
/** On the API origin (the request form lives there, where non-public sites send their visitors). */
export const REQUEST_VERIFY_PATH = '/v1/access/request/confirm';

export interface PersonGrantSpec {
  role?: string;
  paths?: string[];
  target?: string;
}

export interface PersonView {
  person: PersonRow;
  grants: GrantRow[];
}

interface Deps {
  store: Store;
  clock: Clock;
  events: DomainEvents;
  mail: MailOutbox;
  /** The space's URL visitors use (`https://<host>`), where a person's link lands. */
  siteUrlOf: (space: SpaceRow) => string;
  /** The API origin, where a request's confirmation link lands. */
  apiUrl: () => string;
}

/**
 * People of a space (behaviour §3.4): someone invited by e-mail, with no account needed, whose access
 * is person grants (audience `{type:"person", email}`) in the same engine as every other grant. The
 * invitation mails a link that signs the visitor in to this space only; a resend replaces the link;
 * removing the person revokes their grants. Access requests: a visitor asks, confirms the address by
 * a mailed link, and the team approves (a person with a grant, mailed) or denies.
 */
export class PeopleService {
  constructor(private readonly deps: Deps) {}

  private now(): Date {
    return this.deps.clock.now();
  }

  /** A person's active grants: person grants of the space for their address. */
  private static grantsOf(all: GrantRow[], email: string): GrantRow[] {
    return all.filter((g) => {
      if (g.audience_type !== 'person' || g.revoked_at) return false;
      const a = JSON.parse(g.audience) as { email?: string };
      return a.email?.toLowerCase() === email;
    });
  }

  async list(space: SpaceRow, after: string | null, n: number): Promise<PersonView[]> {
    const rows = await this.deps.store.repos.spacePeople.list(space.id, after, n);
    const grants = rows.length ? await this.deps.store.repos.grants.activeForSpace(space.id) : [];
    return rows.map((person) => ({ person, grants: PeopleService.grantsOf(grants, person.email) }));
  }

  async get(space: SpaceRow, personId: string): Promise<PersonView> {
    const person = await this.deps.store.repos.spacePeople.byId(space.id, personId);
    if (!person) throw new ApiError('space_person_not_found', `Person ${personId} was not found.`);
    const grants = await this.deps.store.repos.grants.activeForSpace(space.id);
    return { person, grants: PeopleService.grantsOf(grants, person.email) };
  }

  /** Invites an address: the person, one grant, the e-mail with the sign-in link, in one transaction. */
  async invite(
    p: Principal,
    space: SpaceRow,
    input: PersonGrantSpec & { email: string; name?: string; note?: string },
  ): Promise<PersonView> {
    const email = input.email.trim().toLowerCase();
    const grant = checkSpec(input, '');
    return this.change(space, async (repos) => {
      const view = await this.createPerson(
        repos,
        p,
        space,
        email,
        input.name ?? null,
        [grant],
        input.note ?? null,
      );
      return view;
    });
  }

  /** Replaces every grant of the person (the old ones are revoked, new ones made). */
  async setGrants(
    p: Principal,
    space: SpaceRow,
    personId: string,
    specs: PersonGrantSpec[],
  ): Promise<PersonView> {
    const checked = specs.map((s, i) => checkSpec(s, `/grants/${i}`));
    return this.change(space, async (repos) => {
      const person = await repos.spacePeople.byId(space.id, personId);
      if (!person) throw new ApiError('space_person_not_found', `Person ${personId} was not found.`);
      const at = this.now().toISOString();
      const old = PeopleService.grantsOf(await repos.grants.activeForSpace(space.id), person.email);
      for (const g of old) await repos.grants.revoke(space.id, g.id, at);
      const grants: GrantRow[] = [];
      for (const spec of checked) {
        const row = this.grantRow(space, p, person.email, spec, at);
        await repos.grants.insert(row);
        grants.push(row);
      }
      await this.recordGrants(repos, space, p, old, grants);
      return { person, grants };
    });
  }

  /** A new sign-in link, mailed; the previous link stops working. */
  async resend(p: Principal, space: SpaceRow, personId: string): Promise<PersonView> {
    return this.change(space, async (repos) => {
      const person = await repos.spacePeople.byId(space.id, personId);
      if (!person) throw new ApiError('space_person_not_found', `Person ${personId} was not found.`);
      const { token, hash, expiresAt } = this.newLink();
      const at = this.now().toISOString();
      if (!(await repos.spacePeople.setToken(space.id, person.id, hash, expiresAt, at))) {
        throw new ApiError('space_person_not_found', `Person ${personId} was not found.`);
      }
      const grants = PeopleService.grantsOf(await repos.grants.activeForSpace(space.id), person.email);
      await this.mailLink(repos, p, space, person.email, token, expiresAt, grants[0]?.role ?? 'viewer', null);
      return {
        person: { ...person, token_hash: hash, token_expires_at: expiresAt, last_sent_at: at },
        grants,
      };
    });
  }

  /** Removes the person and revokes their grants: their next request is refused. */
  async remove(p: Principal, space: SpaceRow, personId: string): Promise<void> {
    await this.change(space, async (repos) => {
      const person = await repos.spacePeople.byId(space.id, personId);
      const at = this.now().toISOString();
      if (!person || !(await repos.spacePeople.remove(space.id, personId, at))) {
        throw new ApiError('space_person_not_found', `Person ${personId} was not found.`);
      }
      const old = PeopleService.grantsOf(await repos.grants.activeForSpace(space.id), person.email);
      for (const g of old) await repos.grants.revoke(space.id, g.id, at);
      await this.recordGrants(repos, space, p, old, []);
      return undefined;
    });
  }

  /**
   * The edge's half of a sign-in link: the person whose live link `token` is, on `spaceId`. The first
   * use makes them `active`. Null for a wrong, expired or other space's token.
   */
  async signIn(spaceId: string, token: string): Promise<PersonRow | null> {
    if (!token.startsWith(PERSON_TOKEN_PREFIX) || token.length > 200) return null;
    const person = await this.deps.store.repos.spacePeople.byTokenHash(hashToken(token));
    const now = this.now();
    if (!person || person.space_id !== spaceId) return null;
    if (!person.token_expires_at || Date.parse(person.token_expires_at) <= now.getTime()) return null;
    if (person.status === 'invited')
      await this.deps.store.repos.spacePeople.markActive(person.id, now.toISOString());
    return person;
  }

  // ---- access requests ---------------------------------------------------------------------------

  /**
   * A visitor asks for access (the edge's request form): an unverified request and the e-mail that
   * confirms the address. Nothing reaches the team until it is confirmed. Asking again while a request
   * is open sends a new confirmation (for an unverified one) and changes nothing else.
   */
  async request(
    space: SpaceRow,
    input: { email: string; name?: string | null; message?: string | null; path: string },
  ): Promise<void> {
    const email = input.email.trim().toLowerCase();
    await this.deps.store.transaction(async (repos) => {
      const open = await repos.accessRequests.openFor(space.id, email);
      if (open?.status === 'pending') return;
      if (await repos.spacePeople.byEmail(space.id, email)) return;
      const token = newToken(REQUEST_TOKEN_PREFIX);
      const expiresAt = new Date(this.now().getTime() + REQUEST_VERIFY_TTL_MS).toISOString();
      const row: AccessRequestRow = open
        ? { ...open, verify_token_hash: hashToken(token), verify_expires_at: expiresAt }
        : {
            id: newId('areq'),
            space_id: space.id,
            email,
            name: input.name?.slice(0, 200) || null,
            message: input.message?.slice(0, 1000) || null,
            path: input.path.slice(0, 1024),
            status: 'unverified',
            verify_token_hash: hashToken(token),
            verify_expires_at: expiresAt,
            person_id: null,
            resolved_by: null,
            created_at: this.now().toISOString(),
            verified_at: null,
            resolved_at: null,
          };
      if (open) await repos.accessRequests.refreshToken(open.id, row.verify_token_hash!, expiresAt);
      else await repos.accessRequests.insert(row);
      await this.deps.mail.queue(
        repos,
        requestVerificationMail({
          tenantId: tenantOfSpace(space),
          to: email,
          spaceName: space.title || space.slug,
          link: `${this.deps.apiUrl()}${REQUEST_VERIFY_PATH}?token=${token}`,
        }),
      );
    });
  }

  /** The confirmation link as it arrives (the token names its request and space). */
  async confirmByToken(token: string): Promise<AccessRequestRow | null> {
    if (!token.startsWith(REQUEST_TOKEN_PREFIX) || token.length > 200) return null;
    const r = await this.deps.store.repos.accessRequests.byVerifyHash(hashToken(token));
    return r ? this.confirmRequest(r.space_id, token) : null;
  }

  /** The confirmation link: the request becomes pending (and visible to the team). */
  async confirmRequest(spaceId: string, token: string): Promise<AccessRequestRow | null> {
    if (!token.startsWith(REQUEST_TOKEN_PREFIX) || token.length > 200) return null;
    return this.deps.store.transaction(async (repos) => {
      const r = await repos.accessRequests.byVerifyHash(hashToken(token));
      const now = this.now();
      if (!r || r.space_id !== spaceId || r.status !== 'unverified') return null;
      if (!r.verify_expires_at || Date.parse(r.verify_expires_at) <= now.getTime()) return null;
      if (!(await repos.accessRequests.markVerified(r.id, now.toISOString()))) return null;
      const space = await repos.spaces.byId(spaceId);
      if (space) {
        await this.deps.events.log.record(repos, {
          tenantId: tenantOfSpace(space),
          spaceId,
          actor: { type: 'anonymous', id: r.email },
          code: 'space.access_request_created',
          message: `${r.email} asked for access to ${space.slug}.`,
          details: { requestId: r.id, email: r.email, path: r.path },
        });
      }
      return { ...r, status: 'pending', verified_at: now.toISOString() };
    });
  }

  listRequests(space: SpaceRow, status: string | null, before: string | null, n: number) {
    return this.deps.store.repos.accessRequests.list(space.id, status, before, n);
  }

  /** Approve: the requester becomes a person with one grant (mailed their link); deny: closed. */
  async resolveRequest(
    p: Principal,
    space: SpaceRow,
    requestId: string,
    decision: { approve: true; grant: PersonGrantSpec } | { approve: false },
  ): Promise<AccessRequestRow> {
    const spec = decision.approve ? checkSpec(decision.grant, '') : null;
    return this.change(space, async (repos) => {
      const r = await repos.accessRequests.byId(space.id, requestId);
      if (!r || r.status === 'unverified') {
        throw new ApiError('access_request_not_found', `Access request ${requestId} was not found.`);
      }
      if (r.status !== 'pending') fail('access_request_not_pending', `The request is ${r.status}.`);
      const at = this.now().toISOString();
      let personId: string | null = null;
      if (spec) {
        const existing = await repos.spacePeople.byEmail(space.id, r.email);
        if (existing) {
          const row = this.grantRow(space, p, r.email, spec, at);
          await repos.grants.insert(row);
          await this.recordGrants(repos, space, p, [], [row]);
          personId = existing.id;
        } else {
          const view = await this.createPerson(repos, p, space, r.email, r.name, [spec], null);
          personId = view.person.id;
        }
      }
      const status = spec ? 'approved' : 'denied';
      if (!(await repos.accessRequests.resolve(space.id, r.id, status, p.userId, personId, at))) {
        fail('access_request_not_pending', 'The request was resolved by another request.');
      }
      await this.deps.events.log.record(repos, {
        tenantId: tenantOfSpace(space),
        spaceId: space.id,
        actor: actorFromPrincipal(p),
        code: 'space.access_request_resolved',
        message: `The access request of ${r.email} to ${space.slug} was ${status}.`,
        details: { requestId: r.id, email: r.email, decision: status, personId },
      });
      return { ...r, status, person_id: personId, resolved_at: at, resolved_by: p.userId };
    });
  }

  // ---- internals ---------------------------------------------------------------------------------

  /** One transaction, then the edges drop what they cached of the space's access. */
  private async change<T>(space: SpaceRow, fn: (repos: Repositories) => Promise<T>): Promise<T> {
    const out = await this.deps.store.transaction(fn);
    this.deps.events.spaceChanged(space.id);
    return out;
  }

  private async createPerson(
    repos: Repositories,
    p: Principal,
    space: SpaceRow,
    email: string,
    name: string | null,
    specs: Required<PersonGrantSpec>[],
    note: string | null,
  ): Promise<PersonView> {
    if (p.userId) {
      const me = await repos.users.byId(p.userId);
      if (me?.email.toLowerCase() === email) {
        fail('space_person_self_invite', 'You cannot invite your own address.', { pointer: '/email' });
      }
    }
    const existing = await repos.spacePeople.byEmail(space.id, email);
    if (existing) {
      fail(
        existing.status === 'invited' ? 'space_person_invitation_pending' : 'space_person_already_member',
        `${email} ${existing.status === 'invited' ? 'was invited already' : 'has access already'}.`,
        { pointer: '/email', details: { personId: existing.id } },
      );
    }
    const at = this.now().toISOString();
    const { token, hash, expiresAt } = this.newLink();
    const person: PersonRow = {
      id: newId('per'),
      space_id: space.id,
      email,
      name,
      status: 'invited',
      token_hash: hash,
      token_expires_at: expiresAt,
      invited_by: p.userId,
      last_sent_at: at,
      accepted_at: null,
      created_at: at,
      updated_at: at,
    };
    await repos.spacePeople.insert(person);
    const grants = specs.map((s) => this.grantRow(space, p, email, s, at));
    for (const g of grants) await repos.grants.insert(g);
    await this.recordGrants(repos, space, p, [], grants);
    await this.mailLink(repos, p, space, email, token, expiresAt, grants[0]?.role ?? 'viewer', note);
    return { person, grants };
  }

  private newLink(): { token: string; hash: string; expiresAt: string } {
    const token = newToken(PERSON_TOKEN_PREFIX);
    return {
      token,
      hash: hashToken(token),
      expiresAt: new Date(this.now().getTime() + PERSON_LINK_TTL_MS).toISOString(),
    };
  }

  private async mailLink(
    repos: Repositories,
    p: Principal,
    space: SpaceRow,
    email: string,
    token: string,
    expiresAt: string,
    role: string,
    note: string | null,
  ): Promise<void> {
    const inviter = p.userId ? await repos.users.byId(p.userId) : null;
    await this.deps.mail.queue(
      repos,
      personInvitationMail({
        tenantId: tenantOfSpace(space),
        to: email,
        spaceName: space.title || space.slug,
        inviterName: inviter?.name ?? null,
        role,
        link: `${this.deps.siteUrlOf(space)}${PERSON_LINK_PATH}?token=${token}`,
        expiresAt,
        note,
      }),
    );
  }

  private grantRow(
    space: SpaceRow,
    p: Principal,
    email: string,
    spec: Required<PersonGrantSpec>,
    at: string,
  ): GrantRow {
    return {
      id: newId('grt'),
      space_id: space.id,
      audience_type: 'person',
      audience: JSON.stringify({ type: 'person', email }),
      paths: JSON.stringify(spec.paths),
      role: spec.role,
      target: spec.target,
      constraints: JSON.stringify({ verifiedEmail: true }),
      max_uses: null,
      uses: 0,
      credential_id: null,
      note: null,
      created_by: p.userId,
      created_at: at,
      updated_at: at,
      revoked_at: null,
    };
  }

  private async recordGrants(
    repos: Repositories,
    space: SpaceRow,
    p: Principal,
    revoked: GrantRow[],
    created: GrantRow[],
  ): Promise<void> {
    for (const g of revoked) {
      await this.deps.events.log.record(repos, {
        tenantId: tenantOfSpace(space),
        spaceId: space.id,
        actor: actorFromPrincipal(p),
        code: 'space.grant_revoked',
        message: `Grant ${g.id} of ${space.slug} was revoked.`,
        details: { grantId: g.id, audience: 'person' },
      });
    }
    for (const g of created) {
      await this.deps.events.log.record(repos, {
        tenantId: tenantOfSpace(space),
        spaceId: space.id,
        actor: actorFromPrincipal(p),
        code: 'space.grant_created',
        message: `A ${g.role} grant for a person was added to ${space.slug}.`,
        details: {
          grantId: g.id,
          audience: 'person',
          role: g.role,
          paths: JSON.parse(g.paths),
          target: g.target,
        },
      });
    }
  }
}

/** Defaults and the checks the schema cannot make (glob grammar). */
function checkSpec(spec: PersonGrantSpec, pointer: string): Required<PersonGrantSpec> {
  const paths = spec.paths ?? ['/**'];
  const problem = pathsProblem(paths);
  if (problem) {
    throw new ApiError('invalid_grant', `Paths: ${problem.reason}.`, {
      pointer: `${pointer}/paths/${problem.index}`,
    });
  }
  return { role: spec.role ?? 'viewer', paths, target: spec.target ?? 'live' };
}
