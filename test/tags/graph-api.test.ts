import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

const FORMAT = 'service.tag_graph.v1';

describeEachDb('team tag graphs API', (db) => {
  let t: TestServer;
  let alice: Awaited<ReturnType<typeof createUser>>;
  let aliceKey: string;
  let bobKey: string;
  let spaceKey: string;

  beforeAll(async () => {
    t = await startServer({ db });
    alice = await createUser(t, 'alice');
    const bob = await createUser(t, 'bob');
    const k = await t.api('POST', '/v1/account/api-keys', {
      token: alice.token,
      body: { name: 'tags', team: alice.teamId, preset: 'team_admin' },
    });
    expect(k.status).toBe(201);
    aliceKey = k.body.data.token;
    const bk = await t.api('POST', '/v1/account/api-keys', {
      token: bob.token,
      body: { name: 'bob', team: bob.teamId, preset: 'team_admin' },
    });
    bobKey = bk.body.data.token;
    spaceKey = (await t.server.services.anonymous.createSpace('198.51.100.9', { title: 'Anon' })).key;
  });
  afterAll(() => t.close());

  const versions = () => `/v1/teams/${alice.teamId}/tags/versions`;
  async function draft(body: unknown = undefined): Promise<string> {
    const res = await t.api('POST', versions(), { token: alice.token, body });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }
  const graphUrl = (id: string) => `${versions()}/${id}/graph`;
  const put = (id: string, graph: unknown, ifMatch: string | null = '"1"', token = alice.token) =>
    t.api('PUT', graphUrl(id), {
      token,
      body: { graph },
      headers: ifMatch === null ? {} : { 'if-match': ifMatch },
    });

  it('creates a draft with an empty graph at revision 1', async () => {
    const res = await t.api('POST', versions(), { token: alice.token });
    expect(res.status).toBe(201);
    expect(res.body.$schema).toMatch(/\/schemas\/TagVersionResponse\.json$/);
    const v = res.body.data;
    expect(v.id).toMatch(/^tver_[0-9a-z]{26}$/);
    expect(v).toMatchObject({
      teamId: alice.teamId,
      status: 'draft',
      baseVersionId: null,
      graphRevision: 1,
      counts: { tags: 0, triggers: 0, variables: 0 },
      environments: [],
      createdBy: alice.userId,
      submittedAt: null,
      approvedAt: null,
      publishedAt: null,
      abandonedAt: null,
    });
    const g = await t.api('GET', graphUrl(v.id), { token: alice.token });
    expect(g.status).toBe(200);
    expect(g.headers.etag).toBe('"1"');
    expect(g.body).toEqual({
      $schema: `${t.server.services.config.publicUrl}/schemas/TagGraphResponse.json`,
      data: {
        versionId: v.id,
        graph: { format: FORMAT, tags: [], triggers: [], variables: [], systemModules: {} },
        graphRevision: 1,
      },
    });
  });

  const sample = {
    triggers: [{ id: 'tr-page', type: 'pageview' }],
    variables: [{ id: 'v1', type: 'constant', value: 'x' }],
    tags: [
      {
        id: 'ga',
        name: 'Analytics',
        type: 'script',
        enabled: true,
        consentCategory: 'analytics',
        triggers: ['tr-page'],
        config: { src: 'https://cdn.example.com/a.js', extra: { any: 1 } },
        vendorField: 'kept',
      },
    ],
    systemModules: { consentBanner: { position: 'bottom' } },
    consentPolicy: { mode: 'opt-in' },
  };

  it('replaces the graph with If-Match, exactly the spec’s response, ETag and revision +1', async () => {
    const id = await draft();
    const res = await put(id, sample);
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe('"2"');
    expect(Object.keys(res.body).sort()).toEqual(['$schema', 'data']);
    expect(Object.keys(res.body.data).sort()).toEqual(['graph', 'graphRevision', 'versionId']);
    expect(res.body.data).toEqual({ versionId: id, graph: { format: FORMAT, ...sample }, graphRevision: 2 });
    const again = await put(id, { format: FORMAT }, '"2"');
    expect(again.body.data.graphRevision).toBe(3);
    expect(again.body.data.graph).toEqual({
      format: FORMAT,
      tags: [],
      triggers: [],
      variables: [],
      systemModules: {},
    });
    const v = await t.api('GET', `${versions()}/${id}`, { token: alice.token });
    expect(v.body.data.graphRevision).toBe(3);
    const cached = await t.api('GET', graphUrl(id), {
      token: alice.token,
      headers: { 'if-none-match': '"3"' },
    });
    expect(cached.status).toBe(304);
    expect(cached.headers.etag).toBe('"3"');
    const weak = await t.api('GET', graphUrl(id), {
      token: alice.token,
      headers: { 'if-none-match': 'W/"3"' },
    });
    expect(weak.status).toBe(304);
    const changed = await t.api('GET', graphUrl(id), {
      token: alice.token,
      headers: { 'if-none-match': '"2"' },
    });
    expect(changed.status).toBe(200);
  });

  it('copies a base version’s graph into a new draft', async () => {
    const id = await draft();
    await put(id, sample);
    const copy = await t.api('POST', versions(), { token: alice.token, body: { baseVersionId: id } });
    expect(copy.status).toBe(201);
    expect(copy.body.data).toMatchObject({ baseVersionId: id, graphRevision: 1, counts: { tags: 1 } });
    const g = await t.api('GET', graphUrl(copy.body.data.id), { token: alice.token });
    expect(g.body.data.graph.tags[0].id).toBe('ga');
    const missing = await t.api('POST', versions(), {
      token: alice.token,
      body: { baseVersionId: 'tver_nope' },
    });
    expect(expectProblem(missing, 404, 'not_found').pointer).toBe('/baseVersionId');
  });

  it('needs If-Match (428), refuses a stale one (412 with the current revision)', async () => {
    const id = await draft();
    const none = await put(id, {}, null);
    expectProblem(none, 428, 'precondition_required');
    const stale = await put(id, {}, '"7"');
    const p = expectProblem(stale, 412, 'resource_revision_changed');
    expect(p.details.current).toBe(1);
    expect(stale.headers.etag).toBe('"1"');
    // Strong comparison: a weak tag never matches.
    expectProblem(await put(id, {}, 'W/"1"'), 412, 'resource_revision_changed');
    expectProblem(await put(id, {}, '"abc"'), 412, 'resource_revision_changed');
    // A list matches when any member does; a bare number and * are accepted.
    expect((await put(id, {}, '"9", "1"')).status).toBe(200);
    expect((await put(id, {}, '2')).status).toBe(200);
    expect((await put(id, {}, '*')).body.data.graphRevision).toBe(4);
    // The old revision is now stale.
    expect(expectProblem(await put(id, {}, '"3"'), 412, 'resource_revision_changed').details.current).toBe(4);
  });

  it('lets exactly one of two concurrent writers with the same revision win', async () => {
    const id = await draft();
    const results = await Promise.all([
      put(id, { variables: [{ id: 'a' }] }),
      put(id, { variables: [{ id: 'b' }] }),
      put(id, { variables: [{ id: 'c' }] }),
    ]);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 412, 412]);
    const g = await t.api('GET', graphUrl(id), { token: alice.token });
    expect(g.body.data.graphRevision).toBe(2);
    const winner = results.find((r) => r.status === 200)!;
    expect(g.body.data.graph.variables).toEqual(winner.body.data.graph.variables);
  });

  it('rejects unknown top-level fields and other formats', async () => {
    const id = await draft();
    const p = expectProblem(await put(id, { tags: [], extra: 1 }), 400, 'validation_error');
    expect(p.pointer).toBe('/graph/extra');
    const f = expectProblem(await put(id, { format: 'service.tag_graph.v2' }), 400, 'validation_error');
    expect(f.pointer).toBe('/graph/format');
    expect(expectProblem(await put(id, undefined), 400, 'validation_error').pointer).toBe('/graph');
    expect(
      expectProblem(
        await t.api('PUT', graphUrl(id), {
          token: alice.token,
          body: { graph: {}, more: 1 },
          headers: { 'if-match': '"1"' },
        }),
        400,
        'validation_error',
      ).pointer,
    ).toBe('/more');
    expect(expectProblem(await put(id, { tags: [1] }), 400, 'validation_error').pointer).toBe(
      '/graph/tags/0',
    );
  });

  it('checks item shapes with pointers', async () => {
    const id = await draft();
    const tag = (over: Record<string, unknown>) => ({
      id: 't1',
      type: 'script',
      consentCategory: 'necessary',
      config: { code: 'x()' },
      ...over,
    });
    const cases: Array<[unknown, string]> = [
      [{ tags: [tag({ id: '' })] }, '/graph/tags/0/id'],
      [{ tags: [tag({ id: 'x'.repeat(129) })] }, '/graph/tags/0/id'],
      [{ tags: [tag({}), tag({})] }, '/graph/tags/1/id'],
      [{ tags: [tag({ type: 'flash' })] }, '/graph/tags/0/type'],
      [{ tags: [tag({ consentCategory: undefined })] }, '/graph/tags/0/consentCategory'],
      [{ tags: [tag({ consentCategory: 'tracking' })] }, '/graph/tags/0/consentCategory'],
      [{ tags: [tag({ enabled: 'yes' })] }, '/graph/tags/0/enabled'],
      [{ tags: [tag({ triggers: ['nope'] })] }, '/graph/tags/0/triggers/0'],
      [{ tags: [tag({ config: undefined })] }, '/graph/tags/0/config'],
      [{ tags: [tag({ config: { code: 'a', src: 'https://x.test/a.js' } })] }, '/graph/tags/0/config'],
      [{ tags: [tag({ config: { src: 'http://x.test/a.js' } })] }, '/graph/tags/0/config/src'],
      [{ tags: [tag({ config: { src: 'javascript:alert(1)' } })] }, '/graph/tags/0/config/src'],
      [{ tags: [tag({ type: 'image', config: {} })] }, '/graph/tags/0/config/src'],
      [{ triggers: [{ id: 'a', type: 'hover' }] }, '/graph/triggers/0/type'],
      [{ triggers: [{ id: 'a', type: 'custom' }] }, '/graph/triggers/0/eventName'],
      [{ triggers: [{ type: 'click' }] }, '/graph/triggers/0/id'],
      [{ variables: [{ id: 'v' }, { id: 'v' }] }, '/graph/variables/1/id'],
      [{ systemModules: { 'a/b': 'str' } }, '/graph/systemModules/a~1b'],
    ];
    for (const [graph, pointer] of cases) {
      const res = await put(id, graph);
      const p = expectProblem(
        res,
        400,
        res.body.code === 'validation_error' ? 'validation_error' : 'tag_graph_invalid',
      );
      expect(p.pointer, JSON.stringify(graph).slice(0, 200)).toBe(pointer);
    }
  });

  describe('server limits at n and n+1', () => {
    let id: string;
    let rev = 1;
    beforeAll(async () => {
      id = await draft();
    });
    async function ok(graph: unknown) {
      const res = await put(id, graph, `"${rev}"`);
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      rev = res.body.data.graphRevision;
      return res;
    }
    async function bad(graph: unknown, status: number, code: string, pointer: string) {
      const res = await put(id, graph, `"${rev}"`);
      const p = expectProblem(res, status, code);
      expect(p.pointer).toBe(pointer);
      return p;
    }
    const items = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
    const trig = (i: number) => ({ id: `t${i}`, type: 'pageview' });
    const vari = (i: number) => ({ id: `v${i}` });
    const tagN = (i: number) => ({
      id: `g${i}`,
      type: 'script',
      consentCategory: 'necessary',
      config: { code: '' },
    });

    it('256 tags / 257', async () => {
      await ok({ tags: items(256, tagN) });
      const p = await bad({ tags: items(257, tagN) }, 400, 'tag_graph_too_many_tags', '/graph/tags');
      expect(p.details).toEqual({ limit: 256, actual: 257 });
    });
    it('256 triggers / 257', async () => {
      await ok({ triggers: items(256, trig) });
      await bad({ triggers: items(257, trig) }, 400, 'tag_graph_too_many_triggers', '/graph/triggers');
    });
    it('256 variables / 257', async () => {
      await ok({ variables: items(256, vari) });
      await bad({ variables: items(257, vari) }, 400, 'tag_graph_too_many_variables', '/graph/variables');
    });
    it('64 system modules / 65', async () => {
      const mods = (n: number) => Object.fromEntries(items(n, (i) => [`m${i}`, {}] as const));
      await ok({ systemModules: mods(64) });
      await bad(
        { systemModules: mods(65) },
        400,
        'tag_graph_too_many_system_modules',
        '/graph/systemModules',
      );
    });
    it('256 items per nested array / 257', async () => {
      await ok({ variables: [{ id: 'v', list: items(256, () => 0) }] });
      const p = await bad(
        { variables: [{ id: 'v', list: items(257, () => 0) }] },
        400,
        'tag_graph_array_too_long',
        '/graph/variables/0/list',
      );
      expect(p.details).toEqual({ limit: 256, actual: 257 });
    });
    it('64 keys per object / 65', async () => {
      const obj = (n: number) => Object.fromEntries(items(n, (i) => [`k${i}`, i] as const));
      await ok({ consentPolicy: obj(64) });
      await bad({ consentPolicy: obj(65) }, 400, 'tag_graph_too_many_keys', '/graph/consentPolicy');
      // The first offending object in document order is named, deep inside a tag's config.
      await bad(
        { tags: [{ ...tagN(0), config: { code: '', nested: obj(65) } }], consentPolicy: obj(65) },
        400,
        'tag_graph_too_many_keys',
        '/graph/tags/0/config/nested',
      );
    });
    it('65,536 bytes per string / 65,537 (UTF-8 bytes, property names too)', async () => {
      await ok({ systemModules: { m: { s: 'a'.repeat(65_536) } } });
      await ok({ systemModules: { m: { s: 'é'.repeat(32_768) } } });
      await bad(
        { systemModules: { m: { s: 'a'.repeat(65_537) } } },
        400,
        'tag_graph_string_too_long',
        '/graph/systemModules/m/s',
      );
      // 32,768 two-byte characters plus one: 65,538 bytes though only 32,769 characters.
      await bad(
        { systemModules: { m: { s: 'é'.repeat(32_769) } } },
        400,
        'tag_graph_string_too_long',
        '/graph/systemModules/m/s',
      );
      await bad(
        { systemModules: { m: { ['k'.repeat(65_537)]: 1 } } },
        400,
        'tag_graph_string_too_long',
        `/graph/systemModules/m/${'k'.repeat(65_537)}`,
      );
    });
    it('16 nesting levels / 17 (the graph is level 1)', async () => {
      // graph(1) → systemModules(2) → m: n nested objects {a: …} at levels 3 … 2+n
      const nest = (levels: number): unknown => (levels === 0 ? 'leaf' : { a: nest(levels - 1) });
      await ok({ systemModules: { m: nest(14) } });
      const p = await bad(
        { systemModules: { m: nest(15) } },
        400,
        'tag_graph_too_deep',
        `/graph/systemModules/m${'/a'.repeat(14)}`,
      );
      expect(p.details).toEqual({ limit: 16, actual: 17 });
      // Arrays count as levels too: variables(2) → item(3) → v: n arrays at levels 4 … 3+n.
      const arr = (levels: number): unknown => (levels === 0 ? 1 : [arr(levels - 1)]);
      await ok({ variables: [{ id: 'x', v: arr(13) }] });
      await bad(
        { variables: [{ id: 'x', v: arr(14) }] },
        400,
        'tag_graph_too_deep',
        `/graph/variables/0/v${'/0'.repeat(13)}`,
      );
    });
    it('answers a hostile 200,000-level value with tag_graph_too_deep, not a crash', async () => {
      const raw = `{"graph":{"consentPolicy":{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}}}`;
      const res = await t.api('PUT', graphUrl(id), {
        token: alice.token,
        raw,
        headers: { 'content-type': 'application/json', 'if-match': `"${rev}"` },
      });
      const p = expectProblem(res, 400, 'tag_graph_too_deep');
      // consentPolicy is level 2, a level 3: the 17th level is 14 arrays further in.
      expect(p.pointer).toBe(`/graph/consentPolicy/a${'/0'.repeat(14)}`);
    });
    it('a body over the route’s 1 MiB limit is payload_too_large', async () => {
      const res = await t.api('PUT', graphUrl(id), {
        token: alice.token,
        raw: `{"graph":{"consentPolicy":{"a":"${'x'.repeat(1024 * 1024)}"}}}`,
        headers: { 'content-type': 'application/json', 'if-match': `"${rev}"` },
      });
      expectProblem(res, 413, 'payload_too_large');
    });
    it('262,144 encoded bytes / 262,145 (compact UTF-8 JSON of the graph)', async () => {
      const sized = (total: number) => {
        const shell = { systemModules: { pad: { a: '', b: '', c: '', d: '', e: '' } } };
        let left = total - Buffer.byteLength(JSON.stringify(shell));
        const pad: Record<string, string> = {};
        for (const k of ['a', 'b', 'c', 'd', 'e']) {
          const n = Math.min(left, 60_000);
          pad[k] = 'x'.repeat(n);
          left -= n;
        }
        const g = { systemModules: { pad } };
        expect(Buffer.byteLength(JSON.stringify(g))).toBe(total);
        return g;
      };
      await ok(sized(262_144));
      const p = await bad(sized(262_145), 413, 'tag_graph_too_large', '/graph');
      expect(p.details).toEqual({ limit: 262_144, actual: 262_145 });
      // Whitespace in the request doesn't count: a pretty-printed graph at the limit passes.
      const pretty = JSON.stringify({ graph: sized(262_144) }, null, 8);
      const res = await t.api('PUT', graphUrl(id), {
        token: alice.token,
        raw: pretty,
        headers: { 'content-type': 'application/json', 'if-match': `"${rev}"` },
      });
      expect(res.status).toBe(200);
    });
  });

  describe('credentials', () => {
    let id: string;
    beforeAll(async () => {
      id = await draft();
    });
    const routes = () =>
      [
        ['GET', versions(), undefined],
        ['POST', versions(), {}],
        ['GET', `${versions()}/${id}`, undefined],
        ['GET', graphUrl(id), undefined],
        ['PUT', graphUrl(id), { graph: {} }],
        ['POST', `${versions()}/${id}/submit`, undefined],
        ['GET', `/v1/teams/${alice.teamId}/tags/releases`, undefined],
        ['GET', `/v1/teams/${alice.teamId}/tags/releases/production`, undefined],
      ] as const;

    it('no credential → 401', async () => {
      for (const [m, u, body] of routes()) {
        expectProblem(
          await t.api(m, u, { token: null, body, headers: { 'if-match': '"1"' } }),
          401,
          'unauthorized',
        );
      }
    });
    it('a space key → 404 (an anonymous space has no team)', async () => {
      for (const [m, u, body] of routes()) {
        expectProblem(
          await t.api(m, u, { token: spaceKey, body, headers: { 'if-match': '"1"' } }),
          404,
          'not_found',
        );
      }
    });
    it('an API key of another team → 404', async () => {
      for (const [m, u, body] of routes()) {
        expectProblem(
          await t.api(m, u, { token: bobKey, body, headers: { 'if-match': '"1"' } }),
          404,
          'not_found',
        );
      }
    });
    it('the team’s API key and a session work', async () => {
      const g = await t.api('GET', graphUrl(id), { token: aliceKey });
      expect(g.status).toBe(200);
      const r = await put(id, { variables: [{ id: 'k' }] }, '"1"', aliceKey);
      expect(r.status).toBe(200);
      const s = await put(id, { variables: [{ id: 's' }] }, '"2"', alice.token);
      expect(s.status).toBe(200);
      expect(s.body.data.graphRevision).toBe(3);
    });
    it('a key without spaces:write can read but not write', async () => {
      const k = await t.api('POST', '/v1/account/api-keys', {
        token: alice.token,
        body: { name: 'ro', team: alice.teamId, preset: 'domain_manager' },
      });
      const token = k.body.data.token;
      expect((await t.api('GET', graphUrl(id), { token })).status).toBe(200);
      const p = expectProblem(await put(id, {}, '"3"', token), 403, 'forbidden');
      expect(p.details.requiredScope).toBe('spaces:write');
    });
    it('a version of another team is not found through this team', async () => {
      const bobDraft = await t.api(
        'POST',
        `/v1/teams/${(await t.api('GET', '/v1/teams', { token: bobKey })).body.data[0].id}/tags/versions`,
        { token: bobKey },
      );
      expect(bobDraft.status).toBe(201);
      expectProblem(
        await t.api('GET', `${versions()}/${bobDraft.body.data.id}`, { token: alice.token }),
        404,
        'not_found',
      );
      expectProblem(await put(bobDraft.body.data.id, {}, '"1"'), 404, 'not_found');
    });
  });

  it('lists versions newest first with cursors', async () => {
    const { userId, ...u } = await createUser(t, 'lister');
    const url = `/v1/teams/${u.teamId}/tags/versions`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await t.api('POST', url, { token: u.token })).body.data.id);
    const p1 = await t.api('GET', `${url}?limit=2`, { token: u.token });
    expect(p1.status).toBe(200);
    expect(p1.body.data.map((v: any) => v.id)).toEqual([ids[2], ids[1]]);
    expect(p1.body.pagination.hasMore).toBe(true);
    const p2 = await t.api(
      'GET',
      `${url}?limit=2&cursor=${encodeURIComponent(p1.body.pagination.nextCursor)}`,
      {
        token: u.token,
      },
    );
    expect(p2.body.data.map((v: any) => v.id)).toEqual([ids[0]]);
    expect(p2.body.pagination).toEqual({ nextCursor: null, hasMore: false });
    expect(userId).toBeTruthy();
    expectProblem(await t.api('GET', `${url}?limit=101`, { token: u.token }), 400, 'validation_error');
  });
});
