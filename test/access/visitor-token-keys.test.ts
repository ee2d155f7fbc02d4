import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifyVisitorToken } from '../../src/domain/visitor-tokens/tokens.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

/**
 * The visitor-token keys over HTTP: `GET /.well-known/jwks.json` serves the Ed25519 public key,
 * every instance on one database serves the same one, and a token one instance mints verifies with
 * the keys the other serves.
 */
describeEachDb('visitor token keys (JWKS)', (db) => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startServer({ db });
    b = await startServer({ instanceOf: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('serves one Ed25519 key, the same on every instance, cacheable', async () => {
    const r = await a.api('GET', '/.well-known/jwks.json', { token: null });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toContain('application/jwk-set+json');
    expect(r.headers['cache-control']).toBe('public, max-age=300');
    const jwks = JSON.parse(r.text);
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(jwks.keys[0].d).toBeUndefined();
    const other = await b.api('GET', '/.well-known/jwks.json', { token: null });
    expect(JSON.parse(other.text)).toEqual(jwks);

    const minted = b.server.services.visitorTokens.mint(
      { spaceId: 'spc_x', host: 'x.example.test', purpose: 'backend', subject: 'public' },
      Date.now(),
    );
    const check = verifyVisitorToken(minted.token, {
      jwks,
      issuer: b.server.services.config.publicUrl,
      spaceId: 'spc_x',
      host: 'x.example.test',
      purpose: 'backend',
    });
    expect(check.ok).toBe(true);
  });
});
