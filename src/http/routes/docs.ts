import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  DOCS_CSP,
  htmlDocument,
  markdownToHtml,
  pageHtml,
  prefersMarkdown,
} from '../../domain/docs/render.ts';
import { inTier } from '../../domain/docs/service.ts';
import { DOC_CATEGORIES, type DocCategory, type DocPage, type DocTier } from '../../domain/docs/types.ts';
import { catalog, titleOf } from '../../errors/catalog.ts';
import { ApiError } from '../../errors/problem.ts';
import {
  DocCategory as DocCategorySchema,
  DocsIndexQuery,
  DocsIndexResponse,
  DocsPageResponse,
  DocsSearchResponse,
  DocTier as DocTierSchema,
} from '../../schemas/docs.ts';
import { buildOpenApi } from '../openapi.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';

const CATEGORY_HEADINGS: Record<DocCategory, string> = {
  guide: 'Guides',
  cli: 'CLI',
  api: 'API reference',
  recipe: 'Recipes',
  workflow: 'Workflows',
  error: 'Error codes',
};

const PRODUCT_SUMMARY =
  'Spaces is a self-hostable publishing service: publish immutable versions of sites through an HTTP API, serve each site on its own hostname, and roll forward or back instantly by moving a channel pointer.';

const SearchQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({ maxLength: 1000, description: 'Search text; trimmed. Empty lists every page' }),
    ),
    tier: Type.Optional({ ...DocTierSchema, default: 'reference' }),
    category: Type.Optional(DocCategorySchema),
  },
  { additionalProperties: false },
);

const SlugParams = Type.Object({
  '*': Type.String({
    title: 'slug',
    maxLength: 300,
    description: 'Page slug, e.g. `errors/not_found`',
  }),
});

const PageParams = Type.Object({ '*': Type.String({ maxLength: 310 }) });

/** Documentation served by the service itself: the JSON index, pages, HTML, llms.txt, api-catalog. */
export function docsRoutes(app: FastifyInstance): void {
  const { docs, config } = app.services;

  // Generated pages need the whole route table, which is complete only once every area registered.
  app.addHook('onReady', async () => {
    docs.build(catalog, titleOf, () => buildOpenApi(app.routeSpecs, config.publicUrl));
  });

  const docUrl = (slug: string) => `${config.publicUrl}/docs/${slug}`;
  const entry = (p: DocPage) => ({
    slug: p.slug,
    title: p.title,
    summary: p.summary,
    category: p.category,
    tier: p.tier,
    keywords: p.keywords,
    url: docUrl(p.slug),
    links: { doc: docUrl(p.slug), self: `/v1/docs/pages/${p.slug}` },
  });
  const markdownReply = (reply: FastifyReply, md: string) =>
    reply
      .header('vary', 'Accept')
      .header('cache-control', 'public, max-age=300')
      .type('text/markdown; charset=utf-8')
      .send(md);
  const htmlReply = (reply: FastifyReply, html: string) =>
    reply
      .header('vary', 'Accept')
      .header('cache-control', 'public, max-age=300')
      .header('content-security-policy', DOCS_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(html);

  addRoute(app, {
    method: 'GET',
    url: '/v1/docs',
    operationId: 'listDocs',
    summary: 'List the documentation index',
    description:
      'The documentation index (guides, CLI, API reference, recipes, workflows, error codes), built in memory at start. `tier` defaults to `essential`; `full` adds depth, `reference` returns everything. With `q` the entries are ranked by relevance (full-text, prefix and fuzzy matching).',
    tags: ['Docs'],
    auth: null,
    querystring: DocsIndexQuery,
    responses: { 200: DocsIndexResponse },
    handler: async (req, reply) => {
      const tier = (req.query.tier ?? 'essential') as DocTier;
      const category = (req.query.category ?? null) as DocCategory | null;
      const q = (req.query.q ?? '').trim();
      const pages = q ? docs.search(q, { tier, category }).map((h) => h.page) : docs.list({ tier, category });
      return send(reply, DocsIndexResponse, {
        data: { tier, query: q || null, category, count: pages.length, entries: pages.map(entry) },
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/docs/search',
    operationId: 'searchDocs',
    summary: 'Search the documentation',
    description:
      'Ranked full-text search with a short excerpt per hit. `tier` defaults to `reference` (every page). When `q` is exactly a page slug, `page` carries that page; an empty `q` lists every page in reading order.',
    tags: ['Docs'],
    auth: null,
    querystring: SearchQuery,
    responses: { 200: DocsSearchResponse },
    handler: async (req, reply) => {
      const tier = (req.query.tier ?? 'reference') as DocTier;
      const category = (req.query.category ?? null) as DocCategory | null;
      const q = (req.query.q ?? '').trim();
      const hits = q
        ? docs.search(q, { tier, category })
        : docs.list({ tier, category }).map((page) => ({ page, score: 0, excerpt: page.summary }));
      const exact = q
        ? docs.get(
            q
              .replace(/^\/?(docs\/)?/, '')
              .replace(/\.md$/, '')
              .toLowerCase(),
          )
        : undefined;
      const page = exact && inTier(exact, tier) && (!category || exact.category === category) ? exact : null;
      return send(reply, DocsSearchResponse, {
        data: {
          query: q || null,
          tier,
          category,
          count: hits.length,
          page: page ? { ...entry(page), body: page.body } : null,
          results: hits.map((h) => ({ ...entry(h.page), score: h.score, excerpt: h.excerpt })),
        },
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/docs/pages/*',
    operationId: 'getDocsPage',
    summary: 'Get one documentation page',
    description:
      'The page as JSON (index entry plus its Markdown `body`), or the raw Markdown when `Accept` prefers `text/markdown`. Slugs may contain `/` (`errors/not_found`).',
    tags: ['Docs'],
    auth: null,
    params: SlugParams,
    responses: { 200: DocsPageResponse },
    handler: async (req, reply) => {
      const slug = req.params['*'];
      const page = docs.get(slug);
      if (!page) throw new ApiError('not_found', `There is no documentation page "${slug}".`);
      if (prefersMarkdown(req.headers.accept, 'application/json')) return markdownReply(reply, page.body);
      reply.header('vary', 'Accept');
      return send(reply, DocsPageResponse, { data: { ...entry(page), body: page.body } });
    },
  });

  const indexMarkdown = () => {
    const lines = ['# Spaces documentation', '', PRODUCT_SUMMARY, ''];
    for (const category of DOC_CATEGORIES) {
      const pages = docs.list({ tier: 'reference', category });
      if (!pages.length) continue;
      lines.push(`## ${CATEGORY_HEADINGS[category]}`, '');
      for (const p of pages)
        lines.push(`- [${p.title}](/docs/${p.slug})${category === 'error' ? '' : `: ${p.summary}`}`);
      lines.push('');
    }
    return lines.join('\n');
  };

  const serveIndex = (accept: string | undefined, reply: FastifyReply, forceMd: boolean) => {
    const md = indexMarkdown();
    if (forceMd || prefersMarkdown(accept)) return markdownReply(reply, md);
    return htmlReply(reply, htmlDocument('Spaces documentation', markdownToHtml(md), '/docs.md'));
  };

  addRoute(app, {
    method: 'GET',
    url: '/docs',
    operationId: 'docsIndexPage',
    summary: 'The documentation’s table of contents (HTML, or Markdown when preferred)',
    tags: ['Docs'],
    auth: null,
    hidden: true,
    responses: { 200: 'HTML or Markdown page' },
    handler: async (req, reply) => serveIndex(req.headers.accept, reply, false),
  });

  addRoute(app, {
    method: 'GET',
    url: '/docs.md',
    operationId: 'docsIndexMarkdown',
    summary: 'The documentation’s table of contents as Markdown',
    tags: ['Docs'],
    auth: null,
    hidden: true,
    responses: { 200: 'Markdown page' },
    handler: async (req, reply) => serveIndex(req.headers.accept, reply, true),
  });

  addRoute(app, {
    method: 'GET',
    url: '/docs/*',
    operationId: 'docsPage',
    summary: 'A documentation page as HTML, or Markdown for `<slug>.md` and Markdown-preferring clients',
    description: 'Also the target of every problem `type` URL (`/docs/errors/<code>`).',
    tags: ['Docs'],
    auth: null,
    hidden: true,
    params: PageParams,
    responses: { 200: 'HTML or Markdown page' },
    handler: async (req, reply) => {
      let slug = req.params['*'].replace(/\/+$/, '');
      if (slug === '') return serveIndex(req.headers.accept, reply, false);
      const asMd = slug.endsWith('.md');
      if (asMd) slug = slug.slice(0, -3);
      const page = docs.get(slug);
      if (!page) throw new ApiError('not_found', `There is no documentation page "${slug}".`);
      if (asMd || prefersMarkdown(req.headers.accept)) return markdownReply(reply, page.body);
      return htmlReply(reply, pageHtml(page));
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/llms.txt',
    operationId: 'llmsTxt',
    summary: 'llms.txt: the essential documentation pages, with links to their Markdown',
    tags: ['Docs'],
    auth: null,
    responses: { 200: 'text/plain (Markdown, llms.txt convention)' },
    handler: async (_req, reply) => {
      const base = config.publicUrl;
      const link = (p: DocPage) => `- [${p.title}](${base}/docs/${p.slug}.md): ${p.summary}`;
      const lines = [
        '# Spaces',
        '',
        `> ${PRODUCT_SUMMARY}`,
        '',
        `The API lives under ${base}/v1 and is described by the OpenAPI document at ${base}/v1/openapi.json. Errors are RFC 9457 problem documents whose \`type\` URL is a documentation page; match on \`code\` and follow \`next\`. Every page below is Markdown; \`GET ${base}/v1/docs?q=<words>\` searches them all. Agents can also use the MCP server: Streamable HTTP at ${base}/v1/mcp (Bearer credential), or \`spaces mcp\` over stdio.`,
        '',
      ];
      const essential = docs.list({ tier: 'essential' });
      for (const category of DOC_CATEGORIES) {
        const pages = essential.filter((p) => p.category === category);
        if (!pages.length) continue;
        lines.push(`## ${CATEGORY_HEADINGS[category]}`, '', ...pages.map(link), '');
      }
      const more = docs.list({ tier: 'full' }).filter((p) => p.tier === 'full');
      lines.push(
        '## Optional',
        '',
        ...more.map(link),
        `- [All essential and full pages in one file](${base}/llms-full.txt): the text of every page above`,
        `- [OpenAPI document](${base}/v1/openapi.json): every endpoint, parameter and schema`,
        `- [Documentation index](${base}/v1/docs?tier=reference): JSON index of every page, including the API reference and one page per error code`,
        '',
      );
      return reply
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .send(lines.join('\n'));
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/llms-full.txt',
    operationId: 'llmsFullTxt',
    summary: 'llms-full.txt: every essential and full documentation page, concatenated',
    tags: ['Docs'],
    auth: null,
    responses: { 200: 'text/plain (Markdown)' },
    handler: async (_req, reply) => {
      const pages = docs.list({ tier: 'full' });
      const text = pages.map((p) => `${p.body.trim()}\n\nSource: ${docUrl(p.slug)}\n`).join('\n---\n\n');
      return reply
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .send(`# Spaces — full documentation\n\n> ${PRODUCT_SUMMARY}\n\n---\n\n${text}`);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/.well-known/api-catalog',
    operationId: 'apiCatalog',
    summary: 'API catalog (RFC 9727): where the API’s description and documentation are',
    tags: ['Docs'],
    auth: null,
    responses: { 200: 'application/linkset+json (RFC 9264)' },
    handler: async (_req, reply) => {
      const base = config.publicUrl;
      const body = {
        linkset: [
          {
            anchor: `${base}/v1`,
            'service-desc': [
              { href: `${base}/v1/openapi.json`, type: 'application/vnd.oai.openapi+json;version=3.1' },
            ],
            'service-doc': [{ href: `${base}/docs`, type: 'text/html' }],
            status: [{ href: `${base}/readyz`, type: 'text/plain' }],
          },
        ],
      };
      return reply
        .type('application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"')
        .header('link', `<${base}/.well-known/api-catalog>; rel="api-catalog"`)
        .header('cache-control', 'public, max-age=300')
        .send(Buffer.from(JSON.stringify(body)));
    },
  });
}
