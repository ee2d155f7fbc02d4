import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSpec, flagsToEnv } from '../../src/config.ts';
import { API_KEY_PRESETS } from '../../src/domain/auth/scopes.ts';
import { DEFAULT_DOCS_DIR } from '../../src/domain/docs/loader.ts';
import { PERMISSIONS, ROLES } from '../../src/domain/teams/roles.ts';
import { catalog } from '../../src/errors/catalog.ts';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';

const ENTRY_KEYS = ['category', 'keywords', 'links', 'slug', 'summary', 'tier', 'title', 'url'];
const CATEGORIES = ['guide', 'cli', 'api', 'recipe', 'workflow', 'error'];

describeEachDb('documentation over the API', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  const get = (p: string, headers: Record<string, string> = {}) => t.api('GET', p, { token: null, headers });
  const pub = () => t.server.services.config.publicUrl;

  describe('GET /v1/docs', () => {
    it('lists essential pages by default, without a credential, in the spec’s shape', async () => {
      const res = await get('/v1/docs');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(Object.keys(res.body).sort()).toEqual(['$schema', 'data']);
      expect(res.body.$schema).toBe(`${pub()}/schemas/DocsIndexResponse.json`);
      expect(res.headers.link).toBe(`<${pub()}/schemas/DocsIndexResponse.json>; rel="describedby"`);
      const d = res.body.data;
      expect(Object.keys(d).sort()).toEqual(['category', 'count', 'entries', 'query', 'tier']);
      expect(d).toMatchObject({ tier: 'essential', query: null, category: null });
      expect(d.count).toBe(d.entries.length);
      expect(d.count).toBeGreaterThanOrEqual(6);
      for (const e of d.entries) {
        expect(Object.keys(e).sort()).toEqual(ENTRY_KEYS);
        expect(e.tier).toBe('essential');
        expect(CATEGORIES).toContain(e.category);
        expect(Array.isArray(e.keywords)).toBe(true);
        expect(typeof e.title).toBe('string');
        expect(typeof e.summary).toBe('string');
        expect(e.url).toBe(`${pub()}/docs/${e.slug}`);
        expect(e.links).toEqual({ doc: `${pub()}/docs/${e.slug}`, self: `/v1/docs/pages/${e.slug}` });
      }
      const slugs = d.entries.map((e: any) => e.slug);
      expect(slugs.slice(0, 3)).toEqual(['how-spaces-works', 'quickstart', 'versions-and-rollback']);
      expect(slugs).not.toContain('deprecation-policy'); // full tier
      expect(slugs.some((s: string) => s.startsWith('errors/'))).toBe(false);
    });

    it('validates the body against its own served schema', async () => {
      const res = await get('/v1/docs?tier=reference');
      const schema = await get(new URL(res.body.$schema).pathname);
      expect(schema.status).toBe(200);
      const entry = JSON.parse(schema.text).properties.data.properties.entries.items;
      expect(entry.required.sort()).toEqual(ENTRY_KEYS);
      expect(entry.additionalProperties).toBe(false);
    });

    it('tier full adds depth, reference returns everything', async () => {
      const essential = (await get('/v1/docs?tier=essential')).body.data;
      const full = (await get('/v1/docs?tier=full')).body.data;
      const reference = (await get('/v1/docs?tier=reference')).body.data;
      expect(full.tier).toBe('full');
      expect(reference.tier).toBe('reference');
      expect(full.entries.every((e: any) => e.tier !== 'reference')).toBe(true);
      expect(full.entries.some((e: any) => e.tier === 'full')).toBe(true);
      expect(full.count).toBeGreaterThan(essential.count);
      expect(reference.count).toBe(t.server.services.docs.list({ tier: 'reference' }).length);
      for (const tier of ['essential', 'full', 'reference'])
        expect(reference.entries.some((e: any) => e.tier === tier)).toBe(true);
      const refSlugs = new Set(reference.entries.map((e: any) => e.slug));
      for (const e of full.entries) expect(refSlugs.has(e.slug)).toBe(true);
      expect(refSlugs.has('errors/not_found')).toBe(true);
      expect(refSlugs.has('api/teams')).toBe(true);
      expect(refSlugs.has('api/docs')).toBe(true);
    });

    it('filters by category and reports it', async () => {
      for (const category of CATEGORIES) {
        const d = (await get(`/v1/docs?tier=reference&category=${category}`)).body.data;
        expect(d.category).toBe(category);
        expect(d.count).toBe(d.entries.length);
        expect(d.entries.every((e: any) => e.category === category)).toBe(true);
      }
      const errors = (await get('/v1/docs?tier=reference&category=error')).body.data;
      expect(errors.count).toBe(Object.keys(catalog).length);
      // Default tier still applies with a category: error pages are reference pages.
      expect((await get('/v1/docs?category=error')).body.data.count).toBe(0);
      const recipes = (await get('/v1/docs?category=recipe')).body.data;
      expect(recipes.entries.map((e: any) => e.slug)).toContain('publish-from-ci');
    });

    it('rejects values outside the enums with a pointer', async () => {
      const tier = expectProblem(await get('/v1/docs?tier=everything'), 400, 'validation_error');
      expect(tier.pointer).toBe('/tier');
      expect(tier.details.in).toBe('query');
      const cat = expectProblem(await get('/v1/docs?category=blog'), 400, 'validation_error');
      expect(cat.pointer).toBe('/category');
      expectProblem(await get('/v1/docs?unknown=1'), 400, 'validation_error');
      expectProblem(await get(`/v1/docs?q=${'x'.repeat(1001)}`), 400, 'validation_error');
    });

    it('ignores credentials: a bad token still lists', async () => {
      const res = await t.api('GET', '/v1/docs', { token: 'sfa_not-a-real-key' });
      expect(res.status).toBe(200);
    });

    it('q=rollback ranks the versions page first, and q is trimmed', async () => {
      const d = (await get('/v1/docs?q=%20%20rollback%20')).body.data;
      expect(d.query).toBe('rollback');
      expect(d.tier).toBe('essential');
      expect(d.category).toBeNull();
      expect(d.entries[0].slug).toBe('versions-and-rollback');
      expect(d.count).toBe(d.entries.length);
      expect(d.count).toBeGreaterThan(1); // ranked, not a single exact match
      for (const tier of ['full', 'reference'])
        expect((await get(`/v1/docs?q=rollback&tier=${tier}`)).body.data.entries[0].slug).toBe(
          'versions-and-rollback',
        );
    });

    it('matches prefixes and typos', async () => {
      for (const q of ['rollb', 'rolbak', 'Rollback']) {
        const d = (await get(`/v1/docs?q=${q}`)).body.data;
        expect(d.entries[0]?.slug, q).toBe('versions-and-rollback');
      }
      const cursor = (await get('/v1/docs?q=cursr&tier=reference')).body.data;
      expect(cursor.entries.map((e: any) => e.slug)).toContain('errors/invalid_cursor');
    });

    it('searches within the tier and category, and an empty q lists', async () => {
      const d = (await get('/v1/docs?q=rollback&category=recipe')).body.data;
      expect(d.category).toBe('recipe');
      expect(d.entries.every((e: any) => e.category === 'recipe')).toBe(true);
      const none = (await get('/v1/docs?q=zzqxjv')).body.data;
      expect(none).toMatchObject({ query: 'zzqxjv', count: 0, entries: [] });
      const blank = (await get('/v1/docs?q=%20%20')).body.data;
      expect(blank.query).toBeNull();
      expect(blank.count).toBe((await get('/v1/docs')).body.data.count);
    });
  });

  describe('pages', () => {
    it('GET /v1/docs/pages/{slug} returns the entry and its Markdown body', async () => {
      const res = await get('/v1/docs/pages/versions-and-rollback');
      expect(res.status).toBe(200);
      expect(res.body.$schema).toBe(`${pub()}/schemas/DocsPageResponse.json`);
      const p = res.body.data;
      expect(Object.keys(p).sort()).toEqual([...ENTRY_KEYS, 'body'].sort());
      expect(p.links.self).toBe('/v1/docs/pages/versions-and-rollback');
      expect(p.body).toMatch(/^# Versions, channels and rollback\n/);
      expect(p.keywords).toEqual(expect.arrayContaining(['rollback', 'promote', 'channel', 'live']));
    });

    it('serves slugs with a slash and raw Markdown on Accept: text/markdown', async () => {
      const json = await get('/v1/docs/pages/errors/not_found');
      expect(json.status).toBe(200);
      expect(json.body.data).toMatchObject({
        slug: 'errors/not_found',
        category: 'error',
        tier: 'reference',
      });
      const md = await get('/v1/docs/pages/errors/not_found', { accept: 'text/markdown' });
      expect(md.status).toBe(200);
      expect(md.headers['content-type']).toMatch(/^text\/markdown/);
      expect(md.headers.vary).toMatch(/Accept/);
      expect(md.text).toBe(json.body.data.body);
      expect(md.text).toContain('HTTP 404');
      const browserish = await get('/v1/docs/pages/quickstart', {
        accept: 'application/json, text/markdown;q=0.1',
      });
      expect(browserish.headers['content-type']).toMatch(/^application\/json/);
    });

    it('answers 404 problems for unknown pages', async () => {
      expectProblem(await get('/v1/docs/pages/nope'), 404, 'not_found');
      expectProblem(await get('/v1/docs/pages/'), 404, 'not_found');
      expectProblem(await get('/v1/docs/pages/errors/no_such_code'), 404, 'not_found');
      expectProblem(await get('/docs/nope'), 404, 'not_found');
      expectProblem(await get('/docs/errors/no_such_code'), 404, 'not_found');
    });

    it('renders HTML with a strict CSP, and Markdown when preferred or at <slug>.md', async () => {
      const html = await get('/docs/versions-and-rollback', { accept: 'text/html,*/*;q=0.8' });
      expect(html.status).toBe(200);
      expect(html.headers['content-type']).toMatch(/^text\/html/);
      const csp = String(html.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toContain('script-src');
      expect(csp).not.toContain('unsafe-inline');
      expect(html.headers['x-content-type-options']).toBe('nosniff');
      expect(html.text).toContain('<h1>Versions, channels and rollback</h1>');
      expect(html.text).toContain('<a href="/docs/how-spaces-works">');
      expect(html.text).not.toMatch(/<script/i);
      const md = await get('/docs/versions-and-rollback', { accept: 'text/markdown' });
      expect(md.headers['content-type']).toMatch(/^text\/markdown/);
      expect(md.text).toMatch(/^# Versions, channels and rollback/);
      const dotMd = await get('/docs/versions-and-rollback.md');
      expect(dotMd.headers['content-type']).toMatch(/^text\/markdown/);
      expect(dotMd.text).toBe(md.text);
    });

    it('serves an index page at /docs', async () => {
      const html = await get('/docs', { accept: 'text/html' });
      expect(html.status).toBe(200);
      expect(html.headers['content-type']).toMatch(/^text\/html/);
      expect(html.text).toContain('href="/docs/quickstart"');
      expect(html.text).toContain('href="/docs/errors/not_found"');
      const md = await get('/docs', { accept: 'text/markdown' });
      expect(md.headers['content-type']).toMatch(/^text\/markdown/);
      expect(md.text).toContain('[Quickstart](/docs/quickstart)');
    });

    it('generates an API reference page per OpenAPI tag', async () => {
      const openapi = JSON.parse((await get('/v1/openapi.json')).text);
      const tags = new Set<string>();
      for (const item of Object.values<any>(openapi.paths))
        for (const op of Object.values<any>(item)) for (const tag of op.tags) tags.add(tag);
      const api = (await get('/v1/docs?tier=reference&category=api')).body.data;
      expect(api.count).toBe(tags.size);
      const teams = (await get('/v1/docs/pages/api/teams')).body.data;
      expect(teams.body).toContain('## POST /v1/teams');
      expect(teams.body).toContain('scope `teams:create`');
      const docs = (await get('/v1/docs/pages/api/docs')).body.data;
      expect(docs.body).toContain('## GET /v1/docs/pages/{slug}');
      expect(openapi.paths['/v1/docs/pages/{slug}'].get.parameters[0]).toMatchObject({
        name: 'slug',
        in: 'path',
      });
    });
  });

  describe('search', () => {
    it('GET /v1/docs/search ranks hits with excerpts', async () => {
      const res = await get('/v1/docs/search?q=rollback');
      expect(res.status).toBe(200);
      const d = res.body.data;
      expect(d).toMatchObject({ query: 'rollback', tier: 'reference', category: null, page: null });
      expect(d.count).toBe(d.results.length);
      expect(d.results[0].slug).toBe('versions-and-rollback');
      expect(d.results[0].excerpt.toLowerCase()).toContain('rollback');
      expect(d.results[0].excerpt.length).toBeLessThanOrEqual(210);
      for (let i = 1; i < d.results.length; i++)
        expect(d.results[i].score).toBeLessThanOrEqual(d.results[i - 1].score);
    });

    it('an exact slug returns the page; an empty query lists', async () => {
      const exact = (await get('/v1/docs/search?q=errors/last_owner')).body.data;
      expect(exact.page.slug).toBe('errors/last_owner');
      expect(exact.page.body).toContain('HTTP 409');
      const empty = (await get('/v1/docs/search?category=guide')).body.data;
      expect(empty.query).toBeNull();
      expect(empty.count).toBeGreaterThan(0);
      expect(empty.results.every((r: any) => r.category === 'guide')).toBe(true);
      expectProblem(await get('/v1/docs/search?tier=x'), 400, 'validation_error');
    });
  });

  describe('error pages', () => {
    it('every code in the catalog has a page and its problem type URL answers 200', async () => {
      for (const code of Object.keys(catalog)) {
        const type = `${pub()}/docs/errors/${code}`;
        const html = await request(type, { headers: { accept: 'text/html' } });
        expect(html.statusCode, code).toBe(200);
        const text = await html.body.text();
        expect(text, code).toContain(`<code>${code}</code>`);
        const md = await request(type, { headers: { accept: 'text/markdown' } });
        expect(md.statusCode, code).toBe(200);
        expect(String(md.headers['content-type'])).toMatch(/^text\/markdown/);
        expect(await md.body.text()).toContain(`HTTP ${catalog[code as keyof typeof catalog].status}`);
        const entry = await get(`/v1/docs/pages/errors/${code}`);
        expect(entry.status, code).toBe(200);
        expect(entry.body.data.summary).toBe(catalog[code as keyof typeof catalog].summary);
      }
    });

    it('a real problem’s type URL resolves, and common codes carry suggestions and next', async () => {
      const res = await t.api('GET', '/v1/teams', { token: null });
      const p = expectProblem(res, 401, 'unauthorized');
      expect(p.suggestions.length).toBeGreaterThan(0);
      expect(p.next.length).toBeGreaterThan(0);
      expect(p.type).toBe(`${pub()}/docs/errors/unauthorized`);
      const page = await request(p.type);
      expect(page.statusCode).toBe(200);
      expect(await page.body.text()).toContain(p.suggestions.at(-1));
      const bad = expectProblem(await t.api('GET', '/v1/teams?cursor=tampered'), 400, 'invalid_cursor');
      expect(bad.next[0]).toMatch(/^curl /);
    });

    it('the common codes document what to do', () => {
      for (const code of [
        'unauthorized',
        'forbidden',
        'validation_error',
        'invalid_cursor',
        'rate_limited',
        'not_found',
        'team_slug_conflict',
        'last_owner',
        'signup_closed',
        'payload_too_large',
      ] as const) {
        expect(catalog[code].suggestions?.length, code).toBeGreaterThan(0);
        for (const n of catalog[code].next ?? []) expect(n, code).toMatch(/^(spaces |curl )/);
      }
    });
  });

  describe('discovery', () => {
    it('/llms.txt indexes the essential pages with Markdown links', async () => {
      const res = await get('/llms.txt');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; charset=utf-8/);
      expect(res.text).toMatch(/^# Spaces\n\n> /);
      const essential = (await get('/v1/docs')).body.data.entries;
      for (const e of essential)
        expect(res.text).toContain(`- [${e.title}](${pub()}/docs/${e.slug}.md): ${e.summary}`);
      expect(res.text).toContain('## Optional');
      expect(res.text).toContain(`${pub()}/v1/mcp`);
      expect(res.text).toContain(`${pub()}/llms-full.txt`);
      expect(res.text).not.toContain('/docs/errors/');
      // Every link resolves.
      for (const [, url] of res.text.matchAll(/\]\((http[^)]+)\)/g)) {
        const r = await request(url!);
        await r.body.text();
        expect(r.statusCode, url).toBe(200);
      }
    });

    it('/llms-full.txt concatenates every essential and full page', async () => {
      const res = await get('/llms-full.txt');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      const full = (await get('/v1/docs?tier=full')).body.data.entries;
      for (const e of full) {
        const body = (await get(`/v1/docs/pages/${e.slug}`)).body.data.body.trim();
        expect(res.text).toContain(body);
      }
      expect(res.text).not.toContain('# Not found');
    });

    it('/.well-known/api-catalog is an RFC 9727 linkset', async () => {
      const res = await get('/.well-known/api-catalog');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(
        'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"',
      );
      const body = JSON.parse(res.text);
      const [ctx] = body.linkset;
      expect(ctx.anchor).toBe(`${pub()}/v1`);
      expect(ctx['service-desc'][0].href).toBe(`${pub()}/v1/openapi.json`);
      expect(ctx['service-doc'][0].href).toBe(`${pub()}/docs`);
      for (const rel of ['service-desc', 'service-doc']) {
        const r = await request(ctx[rel][0].href);
        await r.body.text();
        expect(r.statusCode).toBe(200);
      }
      const head = await t.api('HEAD', '/.well-known/api-catalog', { token: null });
      expect(head.status).toBe(200);
      expect(head.headers.link).toBe(`<${pub()}/.well-known/api-catalog>; rel="api-catalog"`);
    });

    it('the deprecation Link of a deprecated route resolves to the policy page', async () => {
      const res = await t.api('GET', '/v1/me');
      expect(res.status).toBe(200);
      const link = String(res.headers.link);
      const m = /<([^>]+)>; rel="deprecation"/.exec(link);
      expect(m?.[1]).toBe(`${pub()}/docs/deprecation-policy`);
      const page = await request(m![1]!, { headers: { accept: 'text/html' } });
      expect(page.statusCode).toBe(200);
      expect(await page.body.text()).toContain('Versioning and deprecation policy');
    });
  });
});

describe('hand-written docs stay true to the code', () => {
  const read = (p: string) => fs.readFileSync(p, 'utf8');
  it('README and the self-hosting page mention every configuration variable and flag', () => {
    const readme = read(path.resolve(DEFAULT_DOCS_DIR, '../README.md'));
    const selfHosting = read(path.join(DEFAULT_DOCS_DIR, 'guides/self-hosting.md'));
    for (const s of configSpec) {
      expect(readme, s.env).toContain(`\`${s.env}\``);
      expect(selfHosting, s.env).toContain(`\`${s.env}\``);
      expect(selfHosting, s.flag).toContain(`\`--${s.flag}\``);
    }
  });

  it('every variable and flag in the configuration tables is one the server accepts', () => {
    const known = new Map(configSpec.map((s) => [s.env, s.flag]));
    for (const page of [
      path.resolve(DEFAULT_DOCS_DIR, '../README.md'),
      path.join(DEFAULT_DOCS_DIR, 'guides/self-hosting.md'),
    ]) {
      const rows = [...read(page).matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| `--([a-z0-9-]+)` \|/gm)];
      expect(rows.length, page).toBeGreaterThan(10);
      for (const [, env, flag] of rows) {
        expect(known.get(env!), `${page}: ${env}`).toBe(flag);
        expect(flagsToEnv([`--${flag}`, 'x']), flag).toEqual({ [env!]: 'x' });
      }
    }
  });

  it('the teams page lists every role, permission row and preset with its scopes', () => {
    const page = read(path.join(DEFAULT_DOCS_DIR, 'guides/teams-and-api-keys.md'));
    for (const role of ROLES) expect(page).toContain(`| ${role} `.trim());
    expect(Object.keys(PERMISSIONS).length).toBe(6);
    for (const [preset, scopes] of Object.entries(API_KEY_PRESETS)) {
      const row = page.split('\n').find((l) => l.startsWith(`| \`${preset}\``));
      expect(row, preset).toBeDefined();
      const listed = [...row!.split('|')[2]!.matchAll(/`([a-z_:]+)`/g)].map((m) => m[1]);
      expect(listed.sort(), preset).toEqual([...scopes].sort());
    }
  });
});
