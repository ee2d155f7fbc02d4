import { createPublicKey, type KeyObject, randomBytes, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  VISITOR_TOKEN_TYPE,
  type VisitorTokenFailure,
  VisitorTokenSigner,
  verifyVisitorToken,
  visitorTokenFrom,
} from '../../src/domain/visitor-tokens/tokens.ts';

/**
 * Visitor tokens (behaviour §3.4): Ed25519 JWTs a backend checks offline — issuer, audience (space
 * id), host, purpose, claim version, 5 s skew. Every refusal reason is reached, the skew is exact at
 * its boundary, and the signature verifies with plain node:crypto from the JWKS (not our helper).
 */

const ISS = 'https://spaces.example.com';
const seed = randomBytes(32);
const signer = new VisitorTokenSigner(seed, () => ISS);
const T = Date.UTC(2026, 10, 28, 12, 0, 0);
const base = {
  spaceId: 'spc_1',
  host: 'Site.Example.com',
  purpose: 'backend',
  subject: 'usr_1',
  role: 'viewer',
};
const expectOk = {
  jwks: signer.jwks(),
  issuer: ISS,
  spaceId: 'spc_1',
  host: 'site.example.com',
  purpose: 'backend',
};

function b64json(o: unknown): string {
  return Buffer.from(JSON.stringify(o)).toString('base64url');
}

describe('visitor tokens', () => {
  it('round-trips, and the signature verifies with node:crypto from the JWKS alone', () => {
    const { token, claims } = signer.mint(base, T);
    expect(claims).toMatchObject({
      iss: ISS,
      aud: 'spc_1',
      host: 'site.example.com',
      cv: 1,
      sub: 'usr_1',
      role: 'viewer',
    });
    expect(claims.exp - claims.iat).toBe(300);
    const r = verifyVisitorToken(token, { ...expectOk, nowMs: T });
    expect(r).toEqual({ ok: true, claims });

    const [h, p, s] = token.split('.') as [string, string, string];
    const header = JSON.parse(Buffer.from(h, 'base64url').toString());
    expect(header).toEqual({ alg: 'EdDSA', typ: VISITOR_TOKEN_TYPE, kid: signer.kid });
    const jwk = signer.jwks().keys.find((k) => k.kid === header.kid)!;
    const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
    expect(verify(null, Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'))).toBe(true);
  });

  it('derives the same key from the same seed on every instance', () => {
    const other = new VisitorTokenSigner(Buffer.from(seed), () => ISS);
    expect(other.jwks()).toEqual(signer.jwks());
    const { token } = other.mint(base, T);
    expect(verifyVisitorToken(token, { ...expectOk, nowMs: T }).ok).toBe(true);
  });

  const cases: Array<
    [string, () => string, Partial<typeof expectOk> & { nowMs?: number }, VisitorTokenFailure]
  > = [
    ['garbage', () => 'not-a-token', {}, 'malformed'],
    ['two parts', () => 'a.b', {}, 'malformed'],
    ['bad json', () => `${b64json({ alg: 'EdDSA' }).slice(2)}.x.y`, {}, 'malformed'],
    [
      'another typ',
      () => {
        const [, p, s] = signer.mint(base, T).token.split('.');
        return `${b64json({ alg: 'EdDSA', typ: 'JWT', kid: signer.kid })}.${p}.${s}`;
      },
      {},
      'malformed',
    ],
    [
      'alg none',
      () => {
        const [, p] = signer.mint(base, T).token.split('.');
        return `${b64json({ alg: 'none', typ: VISITOR_TOKEN_TYPE, kid: signer.kid })}.${p}.`;
      },
      {},
      'malformed',
    ],
    [
      'another server',
      () => new VisitorTokenSigner(randomBytes(32), () => ISS).mint(base, T).token,
      {},
      'unknown_key',
    ],
    [
      'payload changed',
      () => {
        const [h, p, s] = signer.mint(base, T).token.split('.') as [string, string, string];
        const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
        return `${h}.${b64json({ ...claims, sub: 'usr_admin' })}.${s}`;
      },
      {},
      'bad_signature',
    ],
    ['expired past the skew', () => signer.mint(base, T).token, { nowMs: T + 306_000 }, 'expired'],
    [
      'issued in the future past the skew',
      () => signer.mint(base, T + 6_000).token,
      { nowMs: T },
      'not_yet_valid',
    ],
    [
      'another issuer',
      () => signer.mint(base, T).token,
      { issuer: 'https://evil.example', nowMs: T },
      'wrong_issuer',
    ],
    ['another space', () => signer.mint(base, T).token, { spaceId: 'spc_2', nowMs: T }, 'wrong_audience'],
    ['another host', () => signer.mint(base, T).token, { host: 'other.example.com', nowMs: T }, 'wrong_host'],
    ['another purpose', () => signer.mint(base, T).token, { purpose: 'admin', nowMs: T }, 'wrong_purpose'],
    [
      'claim version 2',
      () => {
        // Signed by the right key, but a version this verifier does not know.
        const tok = signer.mint(base, T).token;
        const [, p] = tok.split('.') as [string, string, string];
        const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
        // Re-signed with the server's own key (reached for the test), so only the version is wrong.
        const key = (signer as unknown as { privateKey: KeyObject }).privateKey;
        const h = b64json({ alg: 'EdDSA', typ: VISITOR_TOKEN_TYPE, kid: signer.kid });
        const body = b64json({ ...claims, cv: 2 });
        return `${h}.${body}.${sign(null, Buffer.from(`${h}.${body}`), key).toString('base64url')}`;
      },
      { nowMs: T },
      'unknown_claim_version',
    ],
  ];
  for (const [name, make, over, reason] of cases) {
    it(`refuses: ${name} → ${reason}`, () => {
      const r = verifyVisitorToken(make(), { ...expectOk, nowMs: T, ...over });
      expect(r).toEqual({ ok: false, reason });
    });
  }

  it('allows exactly 5 s of skew at both ends', () => {
    const { token } = signer.mint(base, T);
    expect(verifyVisitorToken(token, { ...expectOk, nowMs: T + 305_000 }).ok).toBe(true);
    expect(verifyVisitorToken(token, { ...expectOk, nowMs: T + 305_999 }).ok).toBe(true);
    expect(verifyVisitorToken(token, { ...expectOk, nowMs: T + 306_000 }).ok).toBe(false);
    const future = signer.mint(base, T + 5_000).token;
    expect(verifyVisitorToken(future, { ...expectOk, nowMs: T }).ok).toBe(true);
  });

  it('reads the token from X-Service-Authorization first, then Authorization', () => {
    const { token } = signer.mint(base, T);
    expect(
      visitorTokenFrom({ 'x-service-authorization': `Bearer ${token}`, authorization: 'Bearer a.b.c' }),
    ).toBe(token);
    expect(visitorTokenFrom({ authorization: `bearer ${token}` })).toBe(token);
    expect(visitorTokenFrom({ authorization: 'Basic abc' })).toBeNull();
    expect(visitorTokenFrom({})).toBeNull();
  });
});
