import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { apiPages, errorPages } from '../../src/domain/docs/generated.ts';
import { DEFAULT_DOCS_DIR, DocsError, loadDocsDir, parsePage } from '../../src/domain/docs/loader.ts';
import { markdownToHtml, pageHtml, prefersMarkdown } from '../../src/domain/docs/render.ts';
import { DocsService, excerpt } from '../../src/domain/docs/service.ts';
import { catalog, titleOf } from '../../src/errors/catalog.ts';
import { buildServer } from '../../src/server.ts';

const good = (over: Record<string, string> = {}, body = 'Body text.') => {
  const fm: Record<string, string> = {
    slug: 'guides-x',
    title: 'X',
    summary: 'About X.',
    category: 'guide',
    tier: 'full',
    keywords: '[a, b]',
    ...over,
  };
  const lines = Object.entries(fm)
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}: ${v}`);
  return `---\n${lines.join('\n')}\n---\n${body}\n`;
};

const tmpDirs: string[] = [];
function docsDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-docs-'));
  tmpDirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}
afterEach(() => {
  for (const d of tmpDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('docs loader', () => {
  it('parses front matter and prefixes the body with its title', () => {
    const p = parsePage('guides/x.md', good({}, 'Hello **world**.'))!;
    expect(p).toMatchObject({
      slug: 'guides-x',
      title: 'X',
      summary: 'About X.',
      category: 'guide',
      tier: 'full',
      keywords: ['a', 'b'],
      order: null,
      source: 'guides/x.md',
    });
    expect(p.body).toBe('# X\n\nHello **world**.\n');
    // A body with its own h1 keeps it.
    expect(parsePage('a.md', good({}, '# Own title\n\nText'))!.body).toBe('# Own title\n\nText\n');
  });

  it('skips Markdown without front matter', () => {
    expect(parsePage('README.md', '# Readme\n')).toBeNull();
  });

  it.each([
    [{ slug: '' }, /"slug" must be a non-empty string/],
    [{ slug: 'Bad Slug' }, /slug "Bad Slug" must be lowercase/],
    [{ slug: '../escape' }, /must be lowercase/],
    [{ title: '' }, /"title" must be a non-empty string/],
    [{ summary: '' }, /"summary" must be a non-empty string/],
    [{ category: 'blog' }, /category must be one of guide, cli, api, recipe, workflow, error, got "blog"/],
    [{ category: '' }, /category must be one of/],
    [{ tier: 'basic' }, /tier must be one of essential, full, reference, got "basic"/],
    [{ keywords: 'rollback' }, /keywords must be a list of non-empty strings/],
    [{ keywords: '' }, /"keywords" is missing/],
    [{ keywords: '[ok, ""]' }, /keywords must be a list/],
    [{ order: 'first' }, /order must be an integer/],
    [{ author: 'me' }, /unknown front matter field "author"/],
  ])('rejects bad front matter %j', (over, message) => {
    expect(() => parsePage('guides/bad.md', good(over))).toThrow(DocsError);
    expect(() => parsePage('guides/bad.md', good(over))).toThrow(message);
  });

  it('names the file in its errors, and rejects broken YAML and unclosed front matter', () => {
    expect(() => parsePage('guides/bad.md', good({ tier: 'x' }))).toThrow(/^docs\/guides\/bad\.md: /);
    expect(() => parsePage('y.md', '---\ntitle: [unclosed\n---\n')).toThrow(/not valid YAML/);
    expect(() => parsePage('y.md', '---\nslug: a\n')).toThrow(/not closed/);
    expect(() => parsePage('y.md', '---\n- a\n- b\n---\n')).toThrow(/must be a YAML mapping/);
  });

  it('reads a tree recursively and refuses a slug used twice', () => {
    const dir = docsDir({
      'guides/a.md': good({ slug: 'a' }),
      'recipes/deep/b.md': good({ slug: 'b', category: 'recipe' }),
      'notes.md': 'no front matter',
      'guides/c.txt': good({ slug: 'c' }),
    });
    expect(
      loadDocsDir(dir)
        .map((p) => p.slug)
        .sort(),
    ).toEqual(['a', 'b']);
    const dup = docsDir({ 'a.md': good({ slug: 'same' }), 'b.md': good({ slug: 'same' }) });
    expect(() => loadDocsDir(dup)).toThrow(/docs\/b\.md: slug "same" is already used by docs\/a\.md/);
  });

  it('loads the repository docs without error', () => {
    const pages = loadDocsDir(DEFAULT_DOCS_DIR);
    expect(pages.map((p) => p.slug)).toEqual(
      expect.arrayContaining([
        'how-spaces-works',
        'quickstart',
        'versions-and-rollback',
        'deprecation-policy',
      ]),
    );
  });

  it('a bad page stops the server from starting, with a clear message', async () => {
    const dir = docsDir({ 'guides/bad.md': good({ slug: 'bad', category: 'blog' }) });
    const data = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-test-'));
    tmpDirs.push(data);
    const config = loadConfig({ PORT: '0', SPACES_DATA_DIR: data, SPACES_LOG_LEVEL: 'silent' });
    await expect(buildServer(config, { docsDir: dir, logger: pino({ level: 'silent' }) })).rejects.toThrow(
      'docs/guides/bad.md: category must be one of guide, cli, api, recipe, workflow, error, got "blog"',
    );
  });
});

describe('parsed pages cache', () => {
  it('takes unchanged pages from the cache, parses changed ones, and never caches a broken page', () => {
    const dir = docsDir({
      'guides/a.md': good({ slug: 'a', title: 'A' }),
      'guides/b.md': good({ slug: 'b', title: 'B' }),
    });
    const cache = path.join(dir, '.cache', 'pages.json');
    expect(loadDocsDir(dir, cache).map((p) => p.title)).toEqual(['A', 'B']);
    const stored = JSON.parse(fs.readFileSync(cache, 'utf8')) as Record<string, { title: string }>;
    expect(
      Object.values(stored)
        .map((p) => p.title)
        .sort(),
    ).toEqual(['A', 'B']);

    // A cached entry is used as is (its title changed in the cache only): the file was not parsed again.
    for (const p of Object.values(stored)) if (p.title === 'A') p.title = 'A from cache';
    fs.writeFileSync(cache, JSON.stringify(stored));
    expect(loadDocsDir(dir, cache).map((p) => p.title)).toEqual(['A from cache', 'B']);

    // Changed bytes are parsed anew.
    fs.writeFileSync(path.join(dir, 'guides/a.md'), good({ slug: 'a', title: 'A2' }));
    expect(loadDocsDir(dir, cache).map((p) => p.title)).toEqual(['A2', 'B']);

    // A broken page still stops the load, cache or not.
    fs.writeFileSync(path.join(dir, 'guides/b.md'), good({ slug: 'b', category: 'blog' }));
    expect(() => loadDocsDir(dir, cache)).toThrow(DocsError);
    expect(() => loadDocsDir(dir, cache)).toThrow(DocsError);

    // An unreadable cache is ignored.
    fs.writeFileSync(path.join(dir, 'guides/b.md'), good({ slug: 'b', title: 'B' }));
    fs.writeFileSync(cache, '{not json');
    expect(loadDocsDir(dir, cache).map((p) => p.title)).toEqual(['A2', 'B']);
  });
});

describe('generated pages', () => {
  it('makes one reference page per catalog code', () => {
    const pages = errorPages(catalog, titleOf, []);
    expect(pages.map((p) => p.slug).sort()).toEqual(
      Object.keys(catalog)
        .map((c) => `errors/${c}`)
        .sort(),
    );
    const unauthorized = pages.find((p) => p.slug === 'errors/unauthorized')!;
    expect(unauthorized).toMatchObject({ category: 'error', tier: 'reference', title: 'Unauthorized' });
    expect(unauthorized.summary).toBe(catalog.unauthorized.summary);
    expect(unauthorized.body).toContain('HTTP 401');
    for (const s of catalog.unauthorized.suggestions!) expect(unauthorized.body).toContain(s);
    for (const n of catalog.unauthorized.next!) expect(unauthorized.body).toContain(n);
  });

  it('lets a hand-written errors/<code> page extend the generated one', () => {
    const override = parsePage(
      'errors/last_owner.md',
      good(
        {
          slug: 'errors/last_owner',
          category: 'error',
          tier: 'full',
          title: 'The last owner',
          keywords: '[ownership]',
        },
        'Teams can never be orphaned.',
      ),
    )!;
    const page = errorPages(catalog, titleOf, [override]).find((p) => p.slug === 'errors/last_owner')!;
    expect(page.title).toBe('The last owner');
    expect(page.tier).toBe('full');
    expect(page.keywords).toEqual(expect.arrayContaining(['last_owner', 'ownership']));
    expect(page.body).toContain('Teams can never be orphaned.');
    expect(page.body).toContain('HTTP 409');
    expect(page.body).toContain(catalog.last_owner.suggestions![0]);
  });

  it('refuses a hand-written page for a code that does not exist', () => {
    const bad = parsePage('errors/nope.md', good({ slug: 'errors/no_such_code', category: 'error' }))!;
    expect(() => errorPages(catalog, titleOf, [bad])).toThrow(/not in the catalog/);
    const wrongCategory = parsePage('errors/x.md', good({ slug: 'errors/not_found', category: 'guide' }))!;
    expect(() => errorPages(catalog, titleOf, [wrongCategory])).toThrow(/category "error"/);
  });

  it('makes an API reference page per OpenAPI tag', () => {
    const pages = apiPages({
      paths: {
        '/v1/things': {
          get: { operationId: 'listThings', summary: 'List things', tags: ['Things'], security: [] },
          post: {
            operationId: 'createThing',
            summary: 'Create a thing',
            tags: ['Things'],
            security: [{ bearer: [] }],
            'x-required-scope': 'spaces:write',
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/ThingBody' } } },
            },
            parameters: [{ name: 'dry', in: 'query', schema: { type: 'boolean', default: false } }],
          },
        },
        '/v1/other': {
          delete: { operationId: 'dropOther', summary: 'Drop', tags: ['Other Stuff'], deprecated: true },
        },
      },
    });
    expect(pages.map((p) => p.slug)).toEqual(['api/other-stuff', 'api/things']);
    const things = pages[1]!;
    expect(things).toMatchObject({ category: 'api', tier: 'reference', title: 'Things API' });
    expect(things.keywords).toEqual(expect.arrayContaining(['listThings', 'createThing']));
    expect(things.body).toContain('## GET /v1/things');
    expect(things.body).toContain('## POST /v1/things');
    expect(things.body).toContain('scope `spaces:write`');
    expect(things.body).toContain('[`ThingBody`](/schemas/ThingBody.json)');
    expect(things.body).toContain('| `dry` | query | no | boolean, default `false` |');
    expect(pages[0]!.body).toContain('**Deprecated**');
  });
});

describe('search index', () => {
  const dir = () =>
    docsDir({
      'a.md': good(
        {
          slug: 'versions',
          title: 'Versions and rollback',
          keywords: '[rollback, promote]',
          tier: 'essential',
        },
        'Promote an older version to roll back.',
      ),
      'b.md': good(
        { slug: 'teams', title: 'Teams', tier: 'essential' },
        'Teams have owners. A rollback is not a team thing.',
      ),
      'c.md': good(
        { slug: 'deep', title: 'Deep dive', tier: 'full', category: 'recipe' },
        'Nothing relevant here.',
      ),
    });

  it('ranks title and keyword matches first, with prefix and typo tolerance', () => {
    const docs = new DocsService(dir());
    docs.build(catalog, titleOf, { paths: {} });
    for (const q of ['rollback', 'rollb', 'rolbak', 'ROLLBACK']) {
      const hits = docs.search(q, { tier: 'essential' });
      expect(hits[0]!.page.slug, q).toBe('versions');
      expect(hits.map((h) => h.page.slug)).toContain('teams');
    }
    expect(docs.search('zzzzqqq', { tier: 'reference' })).toEqual([]);
  });

  it('filters by tier and category', () => {
    const docs = new DocsService(dir());
    docs.build(catalog, titleOf, { paths: {} });
    expect(docs.list({ tier: 'essential' }).map((p) => p.slug)).toEqual(['teams', 'versions']);
    expect(docs.list({ tier: 'full' }).map((p) => p.slug)).toEqual(['teams', 'versions', 'deep']);
    expect(docs.list({ tier: 'reference' }).length).toBe(3 + Object.keys(catalog).length);
    expect(docs.list({ tier: 'reference', category: 'recipe' }).map((p) => p.slug)).toEqual(['deep']);
    expect(docs.search('relevant', { tier: 'essential' })).toEqual([]);
    expect(docs.search('relevant', { tier: 'full' }).map((h) => h.page.slug)).toEqual(['deep']);
  });

  it('cuts an excerpt around the first match', () => {
    const page = parsePage(
      'x.md',
      good(
        {},
        `${'Lorem ipsum dolor sit amet. '.repeat(20)}The rollback happens here. ${'More text. '.repeat(30)}`,
      ),
    )!;
    const e = excerpt(page, ['rollback']);
    expect(e).toContain('The rollback happens here.');
    expect(e.startsWith('…')).toBe(true);
    expect(e.endsWith('…')).toBe(true);
    expect(e.length).toBeLessThanOrEqual(210);
    expect(excerpt(page, ['absent'])).toBe(page.summary);
  });
});

describe('Accept negotiation', () => {
  it.each([
    [undefined, false],
    ['*/*', false],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
    ['text/markdown', true],
    ['text/markdown, text/html;q=0.5', true],
    ['text/markdown, text/html', true],
    ['text/html, text/markdown', false],
    ['text/html, text/markdown;q=0.9', false],
    ['text/*', false],
    ['text/markdown;q=0', false],
  ])('%s → markdown %s', (accept, md) => {
    expect(prefersMarkdown(accept)).toBe(md);
  });
  it('compares against JSON for the API', () => {
    expect(prefersMarkdown('text/markdown', 'application/json')).toBe(true);
    expect(prefersMarkdown('application/json, text/markdown;q=0.5', 'application/json')).toBe(false);
  });
});

describe('HTML rendering', () => {
  it('escapes raw HTML and drops script links', () => {
    const html = markdownToHtml(
      '<script>alert(1)</script>\n\nText <img src=x onerror=alert(1)> [a](javascript:alert(1)) [b](/docs/x) [c](https://example.com/)',
    );
    expect(html).not.toMatch(/<script|<img|javascript:/i);
    expect(html).toContain('&#60;script&#62;');
    expect(html).toContain('<a href="/docs/x">b</a>');
    expect(html).toContain('<a href="https://example.com/">c</a>');
  });

  it('escapes the page title and metadata', () => {
    const page = parsePage('x.md', good({ title: '"<b>Bold</b>"' }, 'Body'))!;
    const html = pageHtml(page);
    expect(html).toContain('<title>&#60;b&#62;Bold&#60;/b&#62; — Spaces docs</title>');
    expect(html).not.toContain('<b>Bold</b>');
  });
});
