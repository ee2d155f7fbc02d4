import { SpacesProblem, unwrap } from '../../sdk/index.ts';
import type { Action } from '../program.ts';
import { table } from './shared.ts';

/** How many search hits a human gets to see. */
const SHOWN_HITS = 10;

/**
 * `spaces docs`: the list of topics; `spaces docs TOPIC`: one page as Markdown (a topic that is not a
 * page slug is "not found", exit 4, with the pages that mention it); `--search WORDS`: ranked hits.
 * The documentation needs no credential, so none is sent (an expired one must not get in the way).
 */
export const docsActions: Record<string, Action> = {
  async docs(ctx, [words], o) {
    // A variadic argument arrives as one array.
    const topic = ((words as unknown as string[] | undefined) ?? []).join(' ').trim();
    const search = typeof o.search === 'string' ? o.search.trim() : '';
    if (search) {
      const r = await unwrap(
        ctx.apiWith(undefined).GET('/v1/docs/search', { params: { query: { q: search } } }),
      );
      const hits = r.data.results;
      ctx.result(r.data, () =>
        hits.length
          ? `${table(
              hits.slice(0, SHOWN_HITS).map((h) => [h.slug, h.title]),
              ['TOPIC', 'TITLE'],
            )}\n\nRead one with \`spaces docs TOPIC\`.`
          : `Nothing in the documentation matches "${search}".`,
      );
      return;
    }
    if (!topic) {
      const r = await unwrap(
        ctx
          .apiWith(undefined)
          .GET('/v1/docs', { params: { query: { tier: o.all ? 'reference' : 'essential' } } }),
      );
      ctx.result(r.data, () =>
        [
          table(
            r.data.entries.map((e) => [e.slug, e.title]),
            ['TOPIC', 'TITLE'],
          ),
          '',
          `Read one with \`spaces docs TOPIC\`${o.all ? '' : '; `--all` lists every page'}; search with \`spaces docs --search WORDS\`.`,
        ].join('\n'),
      );
      return;
    }
    // The search endpoint answers an exact slug with its page, and otherwise with the pages that match.
    const r = await unwrap(
      ctx.apiWith(undefined).GET('/v1/docs/search', { params: { query: { q: topic } } }),
    );
    const page = r.data.page;
    if (!page) {
      const near = r.data.results.slice(0, 5);
      throw new SpacesProblem({
        type: 'about:blank',
        title: 'No such topic',
        status: 404,
        code: 'not_found',
        detail: `There is no documentation topic "${topic}".`,
        requestId: '',
        details: { topic, matches: near.map((h) => h.slug) },
        suggestions: [
          ...near.map((h) => `spaces docs ${h.slug}   (${h.title})`),
          '`spaces docs` lists the topics; `spaces docs --search WORDS` searches every page.',
        ],
      });
    }
    ctx.result(page, () => page.body);
  },
};
