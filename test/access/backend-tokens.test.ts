import { createPublicKey, verify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser, describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/**
 * Visitor tokens for backends (behaviour §3.4), end to end: a real local HTTP backend behind a proxy
 * rewrite, and a function in workerd, receive `X-Service-Authorization: Bearer <token>` minted by
 * the edge for that request. The backend checks it offline the way a stranger would — the JWKS from
 * `GET /.well-known/jwks.json` and Node's own `crypto`, not our verifier — for issuer, audience (the
 * space id), host, purpose, claim version and expiry with 5 s of skew. A header of that name sent by
 * the visitor never arrives.
 */

type Jwks = { keys: { kid: string; x: string; kty: string; crv: string }[] };

/** A backend's own check, written from the spec: Node crypto and the published keys only. */
function backendCheck(
  header: string | undefined,
  jwks: Jwks,
  expect: { iss: string; aud: string; host: string; purpose: string },
): Record<string, unknown> | string {
  const m = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(header ?? '');
  if (!m) return 'no bearer token';
  const [, h, p, s] = m as unknown as [string, string, string, string];
  const head = JSON.parse(Buffer.from(h, 'base64url').toString());
  if (head.alg !== 'EdDSA') return 'alg';
  const jwk = jwks.keys.find((k) => k.kid === head.kid);
  if (!jwk) return 'unknown kid';
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  if (!verify(null, Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'))) return 'signature';
  const c = JSON.parse(Buffer.from(p, 'base64url').toString());
  const now = Math.floor(Date.now() / 1000);
  if (c.cv !== 1) return 'claim version';
  if (now > c.exp + 5) return 'expired';
  if (c.iat > now + 5) return 'not yet valid';
  if (c.exp - c.iat > 300) return 'lifetime too long';
  if (c.iss !== expect.iss) return 'issuer';
  if (c.aud !== expect.aud) return 'audience';
  if (c.host !== expect.host) return 'host';
  if (c.purpose !== expect.purpose) return 'purpose';
  return c;
}

const FUNCTION = `
export default {
  async fetch(request) {
    return Response.json({ token: request.headers.get('x-service-authorization'), auth: request.headers.get('authorization') });
  },
};
`;

describeEachDb('visitor tokens sent to backends', (db) => {
  let t: TestServer;
  let backend: http.Server;
  const seen: http.IncomingHttpHeaders[] = [];
  let jwks: Jwks;
  let up = '';

  beforeAll(async () => {
    backend = http.createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('backend');
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const port = (backend.address() as AddressInfo).port;
    up = `http://127.0.0.1:${port}`;
    t = await startServer({ db, env: { SPACES_PROXY_ALLOW: `127.0.0.1:${port}` } });
    jwks = JSON.parse((await t.api('GET', '/.well-known/jwks.json', { token: null })).text);
  });
  afterAll(async () => {
    await t?.close();
    backend.closeAllConnections();
    await new Promise((r) => backend.close(r));
  });

  const site = async (host: string, path: string, headers: Record<string, string> = {}) => {
    const r = await request(`${t.url}${path}`, { headers: { host, ...headers } });
    return { status: r.statusCode, headers: r.headers, body: await r.body.text() };
  };

  it('a proxy rewrite on a public space: the backend verifies a fresh token; a spoofed one never arrives', async () => {
    const space = await createSpace(t, undefined, { slug: 'tok-public', access: 'public' });
    await publishViaVersions(t, space.id, { 'index.html': 'home', _redirects: `/api/* ${up}/:splat 200` });
    const host = 'tok-public.localhost';
    seen.length = 0;
    const spoof = 'Bearer eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhZG1pbiJ9.AAAA';
    const r = await site(host, '/api/who', { 'x-service-authorization': spoof });
    expect(r.status).toBe(200);
    expect(r.body).toBe('backend');
    expect(seen).toHaveLength(1);
    const got = seen[0]!['x-service-authorization'];
    expect(got).not.toBe(spoof);
    const claims = backendCheck(got as string, jwks, {
      iss: t.server.services.config.publicUrl,
      aud: space.id,
      host,
      purpose: 'backend',
    });
    expect(claims).toMatchObject({ sub: 'public', aud: space.id, host, cv: 1 });
    // Bound to this space and host: another audience or host fails the same check.
    const wrong = { iss: t.server.services.config.publicUrl, aud: 'spc_other', host, purpose: 'backend' };
    expect(backendCheck(got as string, jwks, wrong)).toBe('audience');
    expect(backendCheck(got as string, jwks, { ...wrong, aud: space.id, host: 'evil.localhost' })).toBe(
      'host',
    );
    // Tampered claims fail the signature.
    const [h, , s] = String(got).slice(7).split('.');
    const forged = Buffer.from(JSON.stringify({ ...(claims as object), sub: 'usr_admin' })).toString(
      'base64url',
    );
    expect(backendCheck(`Bearer ${h}.${forged}.${s}`, jwks, { ...wrong, aud: space.id })).toBe('signature');
    // The same visitor's next request (within 5 s) carries the same token: signing is the cost.
    await site(host, '/api/again');
    expect(seen[1]!['x-service-authorization']).toBe(got);
  });

  it('a private space opened by a share link: the token names the grant and its role', async () => {
    const owner = await createUser(t, 'tok-owner');
    const space = await createSpace(t, owner.token, { slug: 'tok-private', access: 'private' });
    await publishViaVersions(
      t,
      space.id,
      { 'index.html': 'home', _redirects: `/api/* ${up}/:splat 200` },
      { token: owner.token },
    );
    const host = 'tok-private.localhost';
    const link = (
      await t.api('POST', `/v1/spaces/${space.id}/share-links`, {
        token: owner.token,
        body: { landing: '/', role: 'viewer' },
      })
    ).body.data;
    const url = new URL(link.url);
    const first = await site(host, `/${url.search}`);
    expect(first.status).toBe(303);
    const cookie = String([first.headers['set-cookie']].flat()[0]).split(';')[0]!;
    seen.length = 0;
    // Without the cookie the backend is never reached.
    expect((await site(host, '/api/x', { 'x-service-authorization': 'Bearer a.b.c' })).status).not.toBe(200);
    expect(seen).toHaveLength(0);
    const r = await site(host, '/api/x', { cookie, 'x-service-authorization': 'Bearer a.b.c' });
    expect(r.status).toBe(200);
    const claims = backendCheck(seen[0]!['x-service-authorization'] as string, jwks, {
      iss: t.server.services.config.publicUrl,
      aud: space.id,
      host,
      purpose: 'backend',
    }) as Record<string, unknown>;
    expect(typeof claims).toBe('object');
    expect(claims.role).toBe('viewer');
    expect(typeof claims.grant).toBe('string');
    expect(claims.sub).toBe(claims.grant);
    // The service's cookies never reach the backend either.
    expect(String(seen[0]!.cookie ?? '')).not.toContain('__Host-spaces');
  });

  it('a function receives the token (and never the visitor’s spoofed header)', async () => {
    const space = await createSpace(t, undefined, { slug: 'tok-fn', access: 'public' });
    await publishViaVersions(t, space.id, {
      'index.html': 'home',
      'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
      'functions/api/who.ts': FUNCTION,
    });
    const host = 'tok-fn.localhost';
    const r = await site(host, '/api/who', {
      'x-service-authorization': 'Bearer spoof.spoof.spoof',
      authorization: 'Bearer visitor-own',
    });
    expect(r.status, r.body).toBe(200);
    const echoed = JSON.parse(r.body);
    expect(echoed.token).not.toContain('spoof');
    expect(echoed.auth).toBe('Bearer visitor-own');
    expect(
      backendCheck(echoed.token, jwks, {
        iss: t.server.services.config.publicUrl,
        aud: space.id,
        host,
        purpose: 'backend',
      }),
    ).toMatchObject({ sub: 'public', aud: space.id });
  }, 30_000);
});
