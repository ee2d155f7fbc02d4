import { afterAll, beforeAll, expect, it } from 'vitest';
import { resetOwner } from '../../src/domain/accounts/bootstrap.ts';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';

/** `spaces admin reset-owner`'s work, on every database (the command itself: first-start.test.ts). */
describeEachDb('reset-owner', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('sets a new owner password, signs the owner out, and issues a key only when asked', async () => {
    const { accounts } = t.server.services;
    const old = t.server.bootstrap!.password;
    const session = await t.api('POST', '/v1/account/sessions', {
      token: null,
      body: { email: 'owner@localhost', password: old },
    });
    expect(session.status).toBe(201);

    const plain = (await resetOwner(t.server.services.store, accounts, { apiKey: false }))!;
    expect(plain.email).toBe('owner@localhost');
    expect(plain.apiKey).toBeNull();
    expectProblem(await t.api('GET', '/v1/account', { token: session.body.data.token }), 401, 'unauthorized');
    expectProblem(
      await t.api('POST', '/v1/account/sessions', {
        token: null,
        body: { email: 'owner@localhost', password: old },
      }),
      401,
      'invalid_credentials',
    );
    const fresh = await t.api('POST', '/v1/account/sessions', {
      token: null,
      body: { email: 'owner@localhost', password: plain.password },
    });
    expect(fresh.status).toBe(201);
    // Other credentials are untouched: the bootstrap key still works.
    expect((await t.api('GET', '/v1/account')).status).toBe(200);

    const withKey = (await resetOwner(t.server.services.store, accounts, { apiKey: true }))!;
    expect(withKey.apiKey!.teamSlug).toBe(t.server.bootstrap!.teamSlug);
    const me = await t.api('GET', '/v1/account', { token: withKey.apiKey!.token });
    expect(me.body.data.user.email).toBe('owner@localhost');
    expect(me.body.data.credential.scopes).toContain('teams:create');
  });
});
