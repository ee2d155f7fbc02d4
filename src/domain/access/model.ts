/**
 * The access model of a site (behaviour §3.4): additive grants. A request passes when ONE active
 * grant matches every dimension — audience, paths (with exclusions local to the grant), the
 * capability asked for (from the grant's role), the target served, and every constraint.
 * Pure data; the matcher is `matcher.ts`.
 */

export const ROLES = ['viewer', 'commenter', 'editor', 'manager'] as const;
export type AccessRole = (typeof ROLES)[number];

export const CAPABILITIES = [
  'page.view',
  'comments.read',
  'comments.write',
  'content.publish',
  'access.manage',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** Each role holds the capabilities of the roles before it, and more. */
export const ROLE_CAPABILITIES: Record<AccessRole, readonly Capability[]> = {
  viewer: ['page.view'],
  commenter: ['page.view', 'comments.read', 'comments.write'],
  editor: ['page.view', 'comments.read', 'comments.write', 'content.publish'],
  manager: ['page.view', 'comments.read', 'comments.write', 'content.publish', 'access.manage'],
};

export function roleCan(role: AccessRole, cap: Capability): boolean {
  return ROLE_CAPABILITIES[role].includes(cap);
}

export const AUDIENCE_TYPES = [
  'public',
  'team',
  'person',
  'link',
  'password',
  'machine',
  'external',
] as const;
export type AudienceType = (typeof AUDIENCE_TYPES)[number];

/**
 * Who a grant is for. `team`: members of the space's team (signed in through the API's hand-off);
 * `person`: one account (`userId`) or e-mail address; `link`/`password`/`machine`: the holder of that
 * credential; `external`: an identity asserted by a connected issuer (team OIDC, Ed25519 signer) —
 * held by the model, issued by nothing yet.
 */
export type Audience =
  | { type: 'public' }
  | { type: 'team' }
  | { type: 'person'; userId?: string; email?: string }
  | { type: 'link'; credentialId: string }
  | { type: 'password'; credentialId: string }
  | { type: 'machine'; credentialId: string }
  | { type: 'external'; issuer: string; subject?: string };

/** `live`, `all-versions`, `version:<id>` or `branch:<name>`. */
export type GrantTarget = string;
export const TARGET_PATTERN =
  '^(live|all-versions|version:[A-Za-z0-9_-]{1,64}|branch:[A-Za-z0-9._/-]{1,200})$';
const TARGET_RE = new RegExp(TARGET_PATTERN);
export function validTarget(t: string): boolean {
  return TARGET_RE.test(t);
}

export interface Constraints {
  /** ISO instant: inactive before. */
  notBefore?: string;
  /** ISO instant: inactive from (the boundary instant itself is expired). */
  expiresAt?: string;
  /** Uses (sessions started or machine requests) the grant allows; counted by the store. */
  maxUses?: number;
  /** The visitor's e-mail address must be verified (optionally in one of these domains). */
  verifiedEmail?: boolean;
  emailDomains?: string[];
  /** Client address in one of these ranges (IPv4/IPv6 CIDR or single address). */
  ip?: string[];
  /** ISO 3166-1 alpha-2; allow: the country must be known and listed; deny: not listed. */
  countryAllow?: string[];
  countryDeny?: string[];
  /** Case-insensitive substrings of the User-Agent that are refused. */
  uaDeny?: string[];
}

export interface Grant {
  id: string;
  audience: Audience;
  /** Path globs (`*` within a segment, `**` any segments); `!glob` excludes, for this grant only. */
  paths: string[];
  role: AccessRole;
  target: GrantTarget;
  constraints: Constraints;
  /** Uses counted so far (see `maxUses`). */
  uses: number;
  /** Set when revoked: a revoked grant matches nothing. */
  revokedAt?: string | null;
}

/** What the request is served from: the live channel, another channel (branch), or a pinned version. */
export type ServedTarget =
  | { kind: 'live'; versionId?: string | null }
  | { kind: 'branch'; name: string; versionId?: string | null }
  | { kind: 'version'; id: string };

/** Who is asking, as far as the edge (or `grants/check`) knows. */
export interface Visitor {
  /** A signed-in account: member of the space's team or not. */
  userId?: string | null;
  teamMember?: boolean;
  email?: string | null;
  emailVerified?: boolean;
  /** Credentials the visitor holds now (a session cookie, a header). */
  credentials?: { type: 'link' | 'password' | 'machine'; id: string }[];
  external?: { issuer: string; subject: string } | null;
  ip?: string | null;
  country?: string | null;
  userAgent?: string | null;
}

export interface AccessQuery {
  /** Normalised path (`/docs/a.html`). */
  path: string;
  target: ServedTarget;
  capability: Capability;
  now: Date;
}
