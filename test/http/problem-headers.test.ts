/**
 * The domain throws coded errors with facts; only src/http/ turns them into statuses and headers.
 * These pin the mapping, and the headers the API has always sent for each fact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalog } from '../../src/errors/catalog.ts';
import { ApiError } from '../../src/errors/problem.ts';
import { httpStatusOf, problemHeaders } from '../../src/http/errors.ts';
import { expectProblem, startServer, type TestServer } from '../helpers/server.ts';

describe('problem mapping (unit)', () => {
  it('takes the status from the catalog, for every code', () => {
    for (const code of Object.keys(catalog) as (keyof typeof catalog)[]) {
      expect(httpStatusOf(new ApiError(code, 'x'))).toBe(catalog[code].status);
    }
    expect(httpStatusOf(new ApiError('resource_revision_changed', 'x'))).toBe(412);
  });

  it('renders each fact as its header, and nothing when there are none', () => {
    expect(problemHeaders(new ApiError('not_found', 'x'))).toEqual({});
    expect(problemHeaders(new ApiError('rate_limited', 'x', { facts: { retryAfterSeconds: 7 } }))).toEqual({
      'retry-after': '7',
    });
    expect(problemHeaders(new ApiError('unauthorized', 'x', { facts: { challenge: {} } }))).toEqual({
      'www-authenticate': 'Bearer realm="spaces"',
    });
    expect(
      problemHeaders(new ApiError('unauthorized', 'x', { facts: { challenge: { error: 'invalid_token' } } })),
    ).toEqual({ 'www-authenticate': 'Bearer realm="spaces", error="invalid_token"' });
    expect(
      problemHeaders(
        new ApiError('forbidden', 'x', {
          facts: { challenge: { error: 'insufficient_scope', scope: 'spaces:write' } },
        }),
      ),
    ).toEqual({
      'www-authenticate': 'Bearer realm="spaces", error="insufficient_scope", scope="spaces:write"',
    });
    expect(
      problemHeaders(new ApiError('resource_revision_changed', 'x', { facts: { currentRevision: 3 } })),
    ).toEqual({ etag: '"3"' });
  });
});

describe('problem headers over HTTP', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(() => t.close());

  it('challenges a missing, an unknown and an unreadable bearer credential', async () => {
    const none = await t.api('GET', '/v1/teams', { token: null });
    expectProblem(none, 401, 'unauthorized');
    expect(none.headers['www-authenticate']).toBe('Bearer realm="spaces"');

    const unknown = await t.api('GET', '/v1/teams', { token: 'sfa_nope' });
    expectProblem(unknown, 401, 'unauthorized');
    expect(unknown.headers['www-authenticate']).toBe('Bearer realm="spaces", error="invalid_token"');

    const garbled = await t.api('GET', '/v1/teams', { token: null, headers: { authorization: 'Basic abc' } });
    expectProblem(garbled, 401, 'unauthorized');
    expect(garbled.headers['www-authenticate']).toBe('Bearer realm="spaces", error="invalid_request"');
  });

  it('names the missing scope of a narrow API key', async () => {
    const key = await t.api('POST', '/v1/account/api-keys', {
      body: { name: 'narrow', preset: 'domain_manager' },
    });
    expect(key.status, key.text).toBe(201);
    const res = await t.api('POST', '/v1/teams', { token: key.body.data.token, body: { name: 'x' } });
    expectProblem(res, 403, 'forbidden');
    expect(res.headers['www-authenticate']).toBe(
      'Bearer realm="spaces", error="insufficient_scope", scope="teams:create"',
    );
  });

  it('lists the allowed methods on a 405', async () => {
    const res = await t.api('DELETE', '/v1/teams');
    expectProblem(res, 405, 'method_not_allowed');
    expect(String(res.headers.allow).split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
  });
});
