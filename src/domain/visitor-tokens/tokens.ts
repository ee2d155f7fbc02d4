import {
  createHash,
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from 'node:crypto';

/**
 * Visitor tokens for backends (behaviour §3.4): a short JWT, signed with Ed25519 by the server, that
 * tells a site's own backend who the visitor is. The backend checks it offline against the server's
 * public keys (`GET /.well-known/jwks.json`): issuer, audience (the space id), host, purpose and
 * claim version, with 5 s of clock skew. It arrives as `Authorization: Bearer` or
 * `X-Service-Authorization: Bearer`.
 *
 * The header's `typ` is `spaces-visitor+jwt`, so no other JWT of ours (or anyone's) verifies as one.
 */

export const VISITOR_TOKEN_TYPE = 'spaces-visitor+jwt';
export const VISITOR_TOKEN_CLAIM_VERSION = 1;
export const VISITOR_TOKEN_SKEW_S = 5;
export const VISITOR_TOKEN_TTL_S = 300;

export interface VisitorClaims {
  /** The server's public URL. */
  iss: string;
  /** The space id. */
  aud: string;
  /** The site hostname the visitor was on (lower case). */
  host: string;
  /** What the token is for (`backend`, or a name the page asked for). */
  purpose: string;
  /** Claim version; a backend refuses a version it does not know. */
  cv: number;
  /** Who: `usr_…` for a signed-in person, a grant id for a link/password/machine visitor, `public`. */
  sub: string;
  /** The role the visitor holds on the space (`viewer`, …), when known. */
  role?: string;
  /** The grant that let the visitor in, when one did. */
  grant?: string;
  /** The visitor's verified e-mail, when the grant knows one. */
  email?: string;
  iat: number;
  exp: number;
  jti: string;
}

export interface Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}

// PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410).
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The server's signing key, derived from a 32-byte seed every instance shares. */
export class VisitorTokenSigner {
  readonly kid: string;
  private readonly privateKey: KeyObject;
  private readonly publicJwk: Jwk;

  constructor(
    seed: Buffer,
    private readonly issuer: () => string,
  ) {
    if (seed.length !== 32) throw new Error('visitor token seed must be 32 bytes');
    this.privateKey = createPrivateKey({
      key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
      format: 'der',
      type: 'pkcs8',
    });
    const x = createPublicKey(this.privateKey).export({ format: 'jwk' }).x as string;
    this.kid = createHash('sha256').update(x).digest('base64url').slice(0, 16);
    this.publicJwk = { kty: 'OKP', crv: 'Ed25519', x, kid: this.kid, use: 'sig', alg: 'EdDSA' };
  }

  /** The JWKS document backends fetch (and cache) to check tokens offline. */
  jwks(): { keys: Jwk[] } {
    return { keys: [this.publicJwk] };
  }

  mint(
    input: {
      spaceId: string;
      host: string;
      purpose: string;
      subject: string;
      role?: string;
      grantId?: string;
      email?: string;
      ttlSeconds?: number;
    },
    nowMs: number,
  ): { token: string; claims: VisitorClaims } {
    const iat = Math.floor(nowMs / 1000);
    const claims: VisitorClaims = {
      iss: this.issuer(),
      aud: input.spaceId,
      host: input.host.toLowerCase(),
      purpose: input.purpose,
      cv: VISITOR_TOKEN_CLAIM_VERSION,
      sub: input.subject,
      ...(input.role ? { role: input.role } : {}),
      ...(input.grantId ? { grant: input.grantId } : {}),
      ...(input.email ? { email: input.email } : {}),
      iat,
      exp: iat + (input.ttlSeconds ?? VISITOR_TOKEN_TTL_S),
      jti: randomBytes(12).toString('base64url'),
    };
    const header = { alg: 'EdDSA', typ: VISITOR_TOKEN_TYPE, kid: this.kid };
    const signingInput = `${b64(JSON.stringify(header))}.${b64(JSON.stringify(claims))}`;
    const signature = sign(null, Buffer.from(signingInput), this.privateKey).toString('base64url');
    return { token: `${signingInput}.${signature}`, claims };
  }
}

function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64url');
}

export type VisitorTokenFailure =
  | 'malformed'
  | 'unknown_key'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'wrong_host'
  | 'wrong_purpose'
  | 'unknown_claim_version';

export type VisitorTokenCheck =
  | { ok: true; claims: VisitorClaims }
  | { ok: false; reason: VisitorTokenFailure };

/**
 * Checks a visitor token offline, as a backend does: the signature against the JWKS, then every
 * binding. Pure (node:crypto only), so a backend can copy it or import it from the package.
 */
export function verifyVisitorToken(
  token: string,
  expect: {
    jwks: { keys: ReadonlyArray<Partial<Jwk> & { kid?: string; x?: string }> };
    issuer: string;
    spaceId: string;
    host: string;
    purpose: string;
    nowMs?: number;
  },
): VisitorTokenCheck {
  const parts = token.split('.');
  if (token.length > 4096 || parts.length !== 3) return { ok: false, reason: 'malformed' };
  const [h, p, s] = parts as [string, string, string];
  let header: { alg?: unknown; typ?: unknown; kid?: unknown };
  let claims: VisitorClaims;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (header?.alg !== 'EdDSA' || header.typ !== VISITOR_TOKEN_TYPE || typeof header.kid !== 'string') {
    return { ok: false, reason: 'malformed' };
  }
  if (!claims || typeof claims !== 'object') return { ok: false, reason: 'malformed' };
  const jwk = expect.jwks.keys.find((k) => k.kid === header.kid && k.kty === 'OKP' && k.crv === 'Ed25519');
  if (!jwk?.x) return { ok: false, reason: 'unknown_key' };
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  } catch {
    return { ok: false, reason: 'unknown_key' };
  }
  const good = verify(null, Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'));
  if (!good) return { ok: false, reason: 'bad_signature' };
  if (claims.cv !== VISITOR_TOKEN_CLAIM_VERSION) return { ok: false, reason: 'unknown_claim_version' };
  const now = Math.floor((expect.nowMs ?? Date.now()) / 1000);
  if (typeof claims.exp !== 'number' || now > claims.exp + VISITOR_TOKEN_SKEW_S)
    return { ok: false, reason: 'expired' };
  if (typeof claims.iat !== 'number' || claims.iat > now + VISITOR_TOKEN_SKEW_S) {
    return { ok: false, reason: 'not_yet_valid' };
  }
  if (claims.iss !== expect.issuer) return { ok: false, reason: 'wrong_issuer' };
  if (claims.aud !== expect.spaceId) return { ok: false, reason: 'wrong_audience' };
  if (claims.host !== expect.host.toLowerCase()) return { ok: false, reason: 'wrong_host' };
  if (claims.purpose !== expect.purpose) return { ok: false, reason: 'wrong_purpose' };
  return { ok: true, claims };
}

/** The token a backend request carries: `X-Service-Authorization: Bearer …` first, then `Authorization`. */
export function visitorTokenFrom(headers: Record<string, string | string[] | undefined>): string | null {
  for (const name of ['x-service-authorization', 'authorization']) {
    const v = headers[name];
    const value = Array.isArray(v) ? v[0] : v;
    const m = value ? /^Bearer\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)\s*$/i.exec(value) : null;
    if (m) return m[1]!;
  }
  return null;
}
