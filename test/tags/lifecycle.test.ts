import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { releasedTeamTags, teamTagsHtmlForSpace } from '../../src/domain/tags/render.ts';
import { RELEASED_GRAPH_TTL_MS } from '../../src/domain/tags/service.ts';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

describeEachDb('team tag versions: lifecycle and releases', (db) => {
  let t: TestServer;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let member: Awaited<ReturnType<typeof createUser>>;
  let spaceKey: string;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await startServer({ db, clock });
    owner = await createUser(t, 'owner');
    member = await createUser(t, 'member');
    // Make `member` a plain member of the owner's team.
    const now = new Date().toISOString();
    await t.server.services.database.db
      .insertInto('team_members')
      .values({
        team_id: owner.teamId,
        user_id: member.userId,
        role: 'member',
        created_at: now,
        updated_at: now,
      })
      .execute();
    spaceKey = (await t.server.services.anonymous.createSpace('198.51.100.10', { title: 'Anon' })).key;
  });
  afterAll(() => t.close());

  const base = () => `/v1/teams/${owner.teamId}/tags`;
  const step = (id: string, s: string, token = owner.token, body?: unknown) =>
    t.api('POST', `${base()}/versions/${id}/${s}`, { token, body });
  const graph = (tagId: string, extra: Record<string, unknown> = {}) => ({
    tags: [
      {
        id: tagId,
        type: 'script',
        consentCategory: 'necessary',
        config: { code: `window.${tagId}=1` },
        ...extra,
      },
      {
        id: `${tagId}-off`,
        type: 'script',
        enabled: false,
        consentCategory: 'necessary',
        config: { code: 'x' },
      },
    ],
  });
  async function draftWith(tagId: string, token = member.token): Promise<string> {
    const d = await t.api('POST', `${base()}/versions`, { token });
    expect(d.status).toBe(201);
    const put = await t.api('PUT', `${base()}/versions/${d.body.data.id}/graph`, {
      token,
      body: { graph: graph(tagId) },
      headers: { 'if-match': '"1"' },
    });
    expect(put.status).toBe(200);
    return d.body.data.id;
  }

  it('draft → submitted → approved → published, sets the production release', async () => {
    const id = await draftWith('one');
    const sub = await step(id, 'submit', member.token);
    expect(sub.status).toBe(200);
    expect(sub.body.data).toMatchObject({ status: 'submitted', submittedBy: member.userId });
    expect(sub.body.data.submittedAt).toBeTruthy();

    // A member can't approve or publish; an owner can.
    expectProblem(await step(id, 'approve', member.token), 403, 'forbidden');
    const appr = await step(id, 'approve');
    expect(appr.body.data).toMatchObject({ status: 'approved', approvedBy: owner.userId });
    expectProblem(await step(id, 'publish', member.token), 403, 'forbidden');

    expectProblem(
      await t.api('GET', `${base()}/releases/production`, { token: owner.token }),
      404,
      'not_found',
    );
    const pub = await step(id, 'publish');
    expect(pub.status).toBe(200);
    expect(pub.body.data).toMatchObject({
      status: 'published',
      publishedBy: owner.userId,
      environments: ['production'],
    });

    const rel = await t.api('GET', `${base()}/releases/production`, { token: member.token });
    expect(rel.status).toBe(200);
    expect(rel.body.data).toEqual({
      environment: 'production',
      versionId: id,
      updatedAt: expect.any(String),
      updatedBy: owner.userId,
    });
    const list = await t.api('GET', `${base()}/releases`, { token: member.token });
    expect(list.body.data.map((r: any) => [r.environment, r.versionId])).toEqual([['production', id]]);

    const tags = await releasedTeamTags(t.server.services, owner.teamId);
    expect(tags.map((x) => x.id)).toEqual(['one']); // the disabled tag is left out
  });

  it('closes every non-draft graph (409 version_closed)', async () => {
    const id = await draftWith('two');
    const put = () =>
      t.api('PUT', `${base()}/versions/${id}/graph`, {
        token: owner.token,
        body: { graph: {} },
        headers: { 'if-match': '"2"' },
      });
    await step(id, 'submit');
    expect(expectProblem(await put(), 409, 'version_closed').details.status).toBe('submitted');
    await step(id, 'approve');
    expectProblem(await put(), 409, 'version_closed');
    await step(id, 'publish');
    expect(expectProblem(await put(), 409, 'version_closed').details.status).toBe('published');
    const g = await t.api('GET', `${base()}/versions/${id}/graph`, { token: owner.token });
    expect(g.body.data.graphRevision).toBe(2);
    expect(g.body.data.graph.tags[0].id).toBe('two');
  });

  it('refuses steps out of order and can’t skip approval', async () => {
    const id = await draftWith('three');
    const p = expectProblem(await step(id, 'publish'), 409, 'tag_version_transition_invalid');
    expect(p.details.status).toBe('draft');
    expectProblem(await step(id, 'approve'), 409, 'tag_version_transition_invalid');
    await step(id, 'submit');
    expectProblem(await step(id, 'submit'), 409, 'tag_version_transition_invalid');
    expectProblem(await step(id, 'publish'), 409, 'tag_version_transition_invalid');
    const ab = await step(id, 'abandon', member.token);
    expect(ab.body.data.status).toBe('abandoned');
    expect(ab.body.data.abandonedAt).toBeTruthy();
    expectProblem(await step(id, 'approve'), 409, 'tag_version_transition_invalid');
    expectProblem(await step(id, 'abandon'), 409, 'tag_version_transition_invalid');
    expectProblem(
      await t.api('PUT', `${base()}/versions/${id}/graph`, {
        token: owner.token,
        body: { graph: {} },
        headers: { 'if-match': '"2"' },
      }),
      409,
      'version_closed',
    );
  });

  it('a published version can’t be abandoned; publishing an older one rolls back; other environments', async () => {
    const a = await draftWith('a');
    for (const s of ['submit', 'approve', 'publish']) expect((await step(a, s)).status).toBe(200);
    expectProblem(await step(a, 'abandon'), 409, 'tag_version_transition_invalid');
    const b = await draftWith('b');
    for (const s of ['submit', 'approve', 'publish']) await step(b, s);
    expect((await releasedTeamTags(t.server.services, owner.teamId)).map((x) => x.id)).toEqual(['b']);

    // Roll production back to a without republishing a new version.
    const back = await step(a, 'publish');
    expect(back.status).toBe(200);
    expect((await releasedTeamTags(t.server.services, owner.teamId)).map((x) => x.id)).toEqual(['a']);

    const prev = await step(b, 'publish', owner.token, { environment: 'preview' });
    expect(prev.body.data.environments).toEqual(['preview']);
    expectProblem(await step(b, 'publish', owner.token, { environment: 'staging' }), 400, 'validation_error');
    const list = await t.api('GET', `${base()}/releases`, { token: owner.token });
    expect(list.body.data.map((r: any) => [r.environment, r.versionId])).toEqual([
      ['production', a],
      ['preview', b],
    ]);
    const v = await t.api('GET', `${base()}/versions/${a}`, { token: owner.token });
    expect(v.body.data.environments).toEqual(['production']);
    expectProblem(
      await t.api('GET', `${base()}/releases/staging`, { token: owner.token }),
      400,
      'validation_error',
    );
    expectProblem(
      await t.api('GET', `${base()}/releases/development`, { token: owner.token }),
      404,
      'not_found',
    );
    // The production release still serves a's tags; releases of another team are not visible.
    const other = await createUser(t, 'other');
    expect(await releasedTeamTags(t.server.services, other.teamId)).toEqual([]);
    expectProblem(await t.api('GET', `${base()}/releases`, { token: other.token }), 404, 'not_found');
    expectProblem(await t.api('GET', `${base()}/releases`, { token: spaceKey }), 404, 'not_found');
    expectProblem(await step(a, 'publish', other.token), 404, 'not_found');
  });

  it('serves released tags to the edge from a short cache; a publish here invalidates it', async () => {
    const a = await draftWith('edge-a');
    for (const s of ['submit', 'approve', 'publish']) await step(a, s);
    const b = await draftWith('edge-b');
    for (const s of ['submit', 'approve']) await step(b, s);
    const html = () => teamTagsHtmlForSpace(t.server.services, { teamId: owner.teamId, config: {} });
    expect(await html()).toBe('<script data-tag-id="edge-a">window.edge-a=1</script>');

    // Another instance moves the pointer: this one notices once the TTL has passed.
    await t.server.services.database.db
      .updateTable('tag_releases')
      .set({ version_id: b })
      .where('team_id', '=', owner.teamId)
      .where('environment', '=', 'production')
      .execute();
    expect(await html()).toContain('edge-a');
    clock.advance(RELEASED_GRAPH_TTL_MS);
    expect(await html()).toContain('edge-b');

    // A publish through this instance is visible at once.
    await step(a, 'publish');
    expect(await html()).toContain('edge-a');

    expect(await teamTagsHtmlForSpace(t.server.services, { teamId: null, config: {} })).toBe('');
    expect(
      await teamTagsHtmlForSpace(t.server.services, {
        teamId: owner.teamId,
        config: { superpowers: { disable_all_injection: true } },
      }),
    ).toBe('');
  });
});
