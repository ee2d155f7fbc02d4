import MiniSearch, { type SearchResult } from 'minisearch';
import type { CodeInfo } from '../../errors/catalog.ts';
import { apiPages, errorPages } from './generated.ts';
import { DocsError, loadDocsDir } from './loader.ts';
import { DOC_CATEGORIES, type DocCategory, type DocPage, type DocTier } from './types.ts';

export interface DocsFilter {
  tier: DocTier;
  category?: DocCategory | null;
}

export interface DocHit {
  page: DocPage;
  score: number;
  excerpt: string;
}

/** `reference` reads everything, `full` everything but reference pages, `essential` only essentials. */
export function inTier(page: DocPage, tier: DocTier): boolean {
  if (tier === 'reference') return true;
  if (tier === 'full') return page.tier !== 'reference';
  return page.tier === 'essential';
}

/** Markdown → plain text good enough for excerpts: no markup, links reduced to their text. */
export function plainText(md: string): string {
  return md
    .replace(/```[^\n]*\n/g, '')
    .replace(/```/g, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^#{1,6}\s+/gm, '')
    .replace(/^\s*[-*+]\s+/gm, '')
    .replace(/^\|?[-:| ]+\|?$/gm, '')
    .replace(/^\s*>\s?/gm, '')
    .replace(/[`*|]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function fuzziness(term: string): number {
  if (term.length <= 3) return 0;
  if (term.length <= 5) return 1;
  return 2;
}

const CATEGORY_RANK = new Map(DOC_CATEGORIES.map((c, i) => [c, i]));

/**
 * The documentation: hand-written pages from `docs/`, one generated page per error code and one per
 * OpenAPI tag, and a MiniSearch full-text index over them, all in memory. The hand-written pages are
 * read and validated at construction (a broken page stops the start; their parsed front matter is
 * cached by content, see `loadDocsDir`); `build` says what the generated pages are made from (once
 * every route is known), and they are made on the first request that needs them, the search index on
 * the first search: at a cold start that was ~150 ms before the first site byte could be served.
 */
export class DocsService {
  private pages = new Map<string, DocPage>();
  private sorted: DocPage[] = [];
  private index: MiniSearch<DocPage> | null = null;
  private inputs: {
    catalog: Record<string, CodeInfo>;
    titleOf: (code: string) => string;
    openapi: () => Record<string, unknown>;
  } | null = null;
  private loaded = false;
  private readonly handwritten: DocPage[];

  constructor(dir: string, options: { cacheFile?: string | null } = {}) {
    this.handwritten = loadDocsDir(dir, options.cacheFile ?? null);
  }

  get ready(): boolean {
    return this.inputs !== null;
  }

  /** What the generated pages come from; `openapi` is called when the pages are first needed. */
  build(
    catalog: Record<string, CodeInfo>,
    titleOf: (code: string) => string,
    openapi: Record<string, unknown> | (() => Record<string, unknown>),
  ): void {
    this.inputs = { catalog, titleOf, openapi: typeof openapi === 'function' ? openapi : () => openapi };
    this.loaded = false;
    this.index = null;
  }

  private load(): void {
    if (this.loaded) return;
    if (!this.inputs) throw new Error('DocsService.build() has not run');
    const { catalog, titleOf, openapi } = this.inputs;
    const overrides = this.handwritten.filter((p) => p.slug.startsWith('errors/'));
    const plain = this.handwritten.filter((p) => !p.slug.startsWith('errors/'));
    const pages = new Map<string, DocPage>();
    for (const p of [...plain, ...errorPages(catalog, titleOf, overrides), ...apiPages(openapi())]) {
      const other = pages.get(p.slug);
      if (other) throw new DocsError(p.source, `slug "${p.slug}" is already used by ${other.source}`);
      pages.set(p.slug, p);
    }
    this.pages = pages;
    this.sorted = [...pages.values()].sort(
      (a, b) =>
        CATEGORY_RANK.get(a.category)! - CATEGORY_RANK.get(b.category)! ||
        (a.order ?? Number.MAX_SAFE_INTEGER) - (b.order ?? Number.MAX_SAFE_INTEGER) ||
        a.title.localeCompare(b.title),
    );
    this.index = null;
    this.loaded = true;
  }

  /** The full-text index, made on first use (a few hundred ms of a cold start otherwise). */
  private get built(): MiniSearch<DocPage> {
    this.load();
    if (!this.index) {
      const index = new MiniSearch<DocPage>({
        idField: 'slug',
        fields: ['title', 'keywords', 'summary', 'body'],
        storeFields: [],
        extractField: (doc, field) => {
          const v = (doc as unknown as Record<string, unknown>)[field];
          return Array.isArray(v) ? v.join(' ') : (v as string);
        },
        searchOptions: {
          boost: { title: 4, keywords: 4, summary: 2, body: 1 },
          prefix: (term) => term.length >= 3,
          fuzzy: fuzziness,
          combineWith: 'OR',
        },
      });
      index.addAll([...this.pages.values()]);
      this.index = index;
    }
    return this.index;
  }

  get(slug: string): DocPage | undefined {
    this.load();
    return this.pages.get(slug);
  }

  /** Pages in reading order: by category, then `order`, then title. */
  list(filter: DocsFilter): DocPage[] {
    this.load();
    return this.sorted.filter(
      (p) => inTier(p, filter.tier) && (!filter.category || p.category === filter.category),
    );
  }

  /** Full-text search, best first; `q` must be non-empty after trimming. */
  search(q: string, filter: DocsFilter): DocHit[] {
    const results = this.built.search(q, {
      filter: (r: SearchResult) => {
        const p = this.pages.get(r.id as string)!;
        return inTier(p, filter.tier) && (!filter.category || p.category === filter.category);
      },
    });
    return results.map((r) => {
      const page = this.pages.get(r.id as string)!;
      return { page, score: r.score, excerpt: excerpt(page, r.terms) };
    });
  }
}

/** About 200 characters of the page around the first matched term, or the summary. */
export function excerpt(page: DocPage, terms: string[], width = 200): string {
  const text = plainText(page.body.replace(/^#\s[^\n]*\n/, ''));
  const lower = text.toLowerCase();
  let at = -1;
  for (const t of terms) {
    const i = lower.search(new RegExp(`\\b${t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    if (i !== -1 && (at === -1 || i < at)) at = i;
  }
  if (at === -1) return page.summary;
  let start = Math.max(0, at - Math.floor(width / 3));
  if (start > 0) {
    const space = text.indexOf(' ', start);
    start = space !== -1 && space < at ? space + 1 : start;
  }
  let end = Math.min(text.length, start + width);
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    end = space > at ? space : end;
  }
  return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
}
