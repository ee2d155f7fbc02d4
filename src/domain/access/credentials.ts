import { createHash, randomBytes } from 'node:crypto';
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import { ApiError } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import type { GrantInput } from '../../schemas/access.ts';
import type { CredentialView, ShareLinkView } from '../../schemas/sharing.ts';
import type { AccessCredentialKind, AccessCredentialRow } from '../../store/repos/access/credentials.ts';
import type { GrantRow } from '../../store/repos/access/grants.ts';
import type { Principal } from '../auth/principal.ts';
import type { SecretBox } from '../publishing/secrets.ts';
import { type AccessService, type AccessSpace, checkGrantInput } from './service.ts';

/** A credential's scope: its grant's paths, target and constraints. */
export interface ScopeInput {
  paths?: string[];
  target?: string;
  constraints?: GrantInput['constraints'];
}

export const LINK_TOKEN_PREFIX = 'sl_';
export const MACHINE_TOKEN_PREFIX = 'smc_';

/** SHA-256 (hex) of a link or machine token: what is stored and looked up. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function newToken(prefix: string): string {
  return `${prefix}${randomBytes(24).toString('base64url')}`;
}

/** Argon2id (the package's default algorithm), OWASP's minimum: 19 MiB, 2 passes. */
const ARGON = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return argonHash(password, ARGON);
}

export async function verifyPassword(hashed: string, password: string): Promise<boolean> {
  try {
    return await argonVerify(hashed, password);
  } catch {
    return false;
  }
}

const KIND_NAME: Record<AccessCredentialKind, string> = {
  link: 'Share link',
  password: 'Password credential',
  machine: 'Machine credential',
};

/**
 * Share links, password and machine credentials (behaviour §3.4). Each owns one grant (audience =
 * the credential), made, changed and revoked with it in one transaction with its event. Secrets are
 * stored hashed (SHA-256 for random tokens, Argon2id for passwords); a link's token is also sealed
 * so its URL can be shown again (edits keep it). Rotation bumps the credential's generation: the
 * edge ends visitor sessions of older generations.
 */
export class CredentialService {
  constructor(
    private readonly grants: AccessService,
    private readonly box: SecretBox,
  ) {}

  private get store() {
    return this.grants.deps.store;
  }

  private now(): string {
    return this.grants.deps.clock.now().toISOString();
  }

  private async load(space: AccessSpace, kind: AccessCredentialKind, id: string) {
    const cred = await this.store.repos.accessCredentials.byId(space.id, kind, id);
    const grant = cred ? await this.store.repos.grants.byId(space.id, cred.grant_id) : null;
    if (!cred || !grant) {
      throw new ApiError(
        kind === 'link' ? 'share_link_not_found' : 'access_credential_not_found',
        `${KIND_NAME[kind]} ${id} was not found.`,
      );
    }
    return { cred, grant };
  }

  private base(cred: AccessCredentialRow, grant: GrantRow) {
    const constraints = JSON.parse(grant.constraints) as Record<string, unknown>;
    if (grant.max_uses !== null) constraints.maxUses = grant.max_uses;
    return {
      id: cred.id,
      spaceId: cred.space_id,
      name: cred.name,
      grantId: grant.id,
      role: grant.role,
      paths: JSON.parse(grant.paths) as string[],
      target: grant.target,
      constraints,
      uses: grant.uses,
      createdAt: cred.created_at,
      updatedAt: cred.updated_at,
      lastUsedAt: cred.last_used_at,
    };
  }

  private linkView(cred: AccessCredentialRow, grant: GrantRow, liveUrl: string): ShareLinkView {
    const token = this.box.open(cred.token_sealed!, `share-link/${cred.id}`);
    const landing = cred.landing ?? '/';
    return { ...this.base(cred, grant), landing, url: `${liveUrl}${landing}?__=${token}` };
  }

  private credView(cred: AccessCredentialRow, grant: GrantRow): CredentialView {
    return { ...this.base(cred, grant), kind: cred.kind as 'password' | 'machine' };
  }

  /** Creates the credential row and its grant, with the event, in one transaction. */
  private async create(
    p: Principal,
    space: AccessSpace,
    kind: AccessCredentialKind,
    fields: {
      name?: string;
      role: string;
      scope: ScopeInput;
      secretHash: string;
      sealed?: (id: string) => string;
      landing?: string;
    },
  ) {
    const id = newId(kind === 'link' ? 'lnk' : kind === 'password' ? 'pwc' : 'mch');
    const grantFields = checkGrantInput(
      {
        audience: { type: kind, credentialId: id },
        role: fields.role as GrantInput['role'],
        paths: fields.scope.paths,
        target: fields.scope.target,
        constraints: fields.scope.constraints,
      },
      true,
    );
    const grant = this.grants.newRow(space, p, grantFields, id);
    const at = this.now();
    const cred: AccessCredentialRow = {
      id,
      space_id: space.id,
      kind,
      grant_id: grant.id,
      name: fields.name ?? null,
      secret_hash: fields.secretHash,
      token_sealed: fields.sealed ? fields.sealed(id) : null,
      landing: fields.landing ?? null,
      generation: 1,
      created_by: grant.created_by,
      created_at: at,
      updated_at: at,
      last_used_at: null,
      revoked_at: null,
    };
    await this.grants.change(space, p, async (repos) => {
      await repos.grants.insert(grant);
      await repos.accessCredentials.insert(cred);
      return kind === 'link'
        ? {
            result: undefined,
            code: 'space.share_link_created',
            message: `A ${grantFields.role} share link to ${space.slug} was made.`,
            details: { linkId: id, grantId: grant.id, role: grantFields.role, landing: cred.landing },
          }
        : {
            result: undefined,
            code: 'space.grant_created',
            message: `A ${kind} credential (${grantFields.role}) was added to ${space.slug}.`,
            details: { grantId: grant.id, credentialId: id, audience: kind, role: grantFields.role },
          };
    });
    return { cred, grant };
  }

  async list(space: AccessSpace, kind: AccessCredentialKind) {
    const rows = await this.store.repos.accessCredentials.listForSpace(space.id, kind);
    const out: Array<{ cred: AccessCredentialRow; grant: GrantRow }> = [];
    for (const cred of rows) {
      const grant = await this.store.repos.grants.byId(space.id, cred.grant_id);
      if (grant && !grant.revoked_at) out.push({ cred, grant });
    }
    return out;
  }

  // ── share links ──
  async listLinks(space: AccessSpace, liveUrl: string): Promise<ShareLinkView[]> {
    return (await this.list(space, 'link')).map(({ cred, grant }) => this.linkView(cred, grant, liveUrl));
  }

  async createLink(
    p: Principal,
    space: AccessSpace,
    liveUrl: string,
    input: { name?: string; role?: string; landing?: string } & ScopeInput,
  ): Promise<ShareLinkView> {
    const token = newToken(LINK_TOKEN_PREFIX);
    const { cred, grant } = await this.create(p, space, 'link', {
      name: input.name,
      role: input.role ?? 'commenter',
      scope: input,
      secretHash: tokenHash(token),
      sealed: (id) => this.box.seal(token, `share-link/${id}`),
      landing: input.landing ?? '/',
    });
    return this.linkView(cred, grant, liveUrl);
  }

  /** Edits keep the URL (the token never changes); scope and role change the link's grant. */
  async updateLink(
    p: Principal,
    space: AccessSpace,
    liveUrl: string,
    id: string,
    input: { name?: string; role?: string; landing?: string } & ScopeInput,
  ): Promise<ShareLinkView> {
    const { cred, grant } = await this.load(space, 'link', id);
    const current = this.base(cred, grant);
    const fields = checkGrantInput(
      {
        audience: { type: 'link', credentialId: id },
        role: (input.role ?? grant.role) as GrantInput['role'],
        paths: input.paths ?? current.paths,
        target: input.target ?? grant.target,
        constraints: (input.constraints ?? current.constraints) as GrantInput['constraints'],
        note: grant.note,
      },
      true,
    );
    const at = this.now();
    await this.grants.change(space, p, async (repos) => {
      await repos.grants.update(space.id, grant.id, {
        role: fields.role,
        paths: JSON.stringify(fields.paths),
        target: fields.target,
        constraints: JSON.stringify(fields.constraints),
        max_uses: fields.maxUses,
        updated_at: at,
      });
      await repos.accessCredentials.update(id, {
        updated_at: at,
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.landing !== undefined ? { landing: input.landing } : {}),
      });
      return {
        result: undefined,
        code: 'space.grant_updated',
        message: `Share link ${id} of ${space.slug} was changed.`,
        details: { grantId: grant.id, linkId: id, role: fields.role },
      };
    });
    const again = await this.load(space, 'link', id);
    return this.linkView(again.cred, again.grant, liveUrl);
  }

  /** Revokes a credential and its grant at once (the edges drop it on the change notice). */
  async revoke(p: Principal, space: AccessSpace, kind: AccessCredentialKind, id: string): Promise<void> {
    const { grant } = await this.load(space, kind, id);
    const at = this.now();
    await this.grants.change(space, p, async (repos) => {
      if (!(await repos.accessCredentials.revoke(space.id, id, at)))
        throw new ApiError(
          kind === 'link' ? 'share_link_not_found' : 'access_credential_not_found',
          `${KIND_NAME[kind]} ${id} was not found.`,
        );
      await repos.grants.revoke(space.id, grant.id, at);
      return kind === 'link'
        ? {
            result: undefined,
            code: 'space.share_link_revoked',
            message: `Share link ${id} of ${space.slug} was revoked.`,
            details: { linkId: id, grantId: grant.id },
          }
        : {
            result: undefined,
            code: 'space.grant_revoked',
            message: `The ${kind} credential ${id} of ${space.slug} was revoked.`,
            details: { grantId: grant.id, credentialId: id, audience: kind },
          };
    });
  }

  // ── machine and password credentials ──
  async listCredentials(space: AccessSpace, kind: 'password' | 'machine'): Promise<CredentialView[]> {
    return (await this.list(space, kind)).map(({ cred, grant }) => this.credView(cred, grant));
  }

  async createMachine(
    p: Principal,
    space: AccessSpace,
    input: { name?: string; role?: string } & ScopeInput,
  ): Promise<CredentialView & { token: string }> {
    const token = newToken(MACHINE_TOKEN_PREFIX);
    const { cred, grant } = await this.create(p, space, 'machine', {
      name: input.name,
      role: input.role ?? 'viewer',
      scope: input,
      secretHash: tokenHash(token),
    });
    return { ...this.credView(cred, grant), token };
  }

  async createPassword(
    p: Principal,
    space: AccessSpace,
    input: { name?: string; role?: string; password: string } & ScopeInput,
  ): Promise<CredentialView> {
    const { cred, grant } = await this.create(p, space, 'password', {
      name: input.name,
      role: input.role ?? 'viewer',
      scope: input,
      secretHash: await hashPassword(input.password),
    });
    return this.credView(cred, grant);
  }

  /**
   * A new secret for the same credential (and grant): a machine gets a new token (shown once), a
   * password its new hash. Either way the generation moves on, ending the sessions it started.
   */
  async rotate(
    p: Principal,
    space: AccessSpace,
    kind: 'password' | 'machine',
    id: string,
    password?: string,
  ): Promise<CredentialView & { token?: string }> {
    const { grant } = await this.load(space, kind, id);
    const token = kind === 'machine' ? newToken(MACHINE_TOKEN_PREFIX) : undefined;
    const secretHash = token ? tokenHash(token) : await hashPassword(password ?? '');
    const at = this.now();
    await this.grants.change(space, p, async (repos) => {
      await repos.accessCredentials.update(id, {
        secret_hash: secretHash,
        updated_at: at,
        bumpGeneration: true,
      });
      return {
        result: undefined,
        code: 'space.grant_updated',
        message: `The ${kind} credential ${id} of ${space.slug} was rotated.`,
        details: { grantId: grant.id, credentialId: id, rotated: true },
      };
    });
    const again = await this.load(space, kind, id);
    return { ...this.credView(again.cred, again.grant), ...(token ? { token } : {}) };
  }
}
