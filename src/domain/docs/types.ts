export const DOC_CATEGORIES = ['guide', 'cli', 'api', 'recipe', 'workflow', 'error'] as const;
export type DocCategory = (typeof DOC_CATEGORIES)[number];

/** `essential` pages are what a newcomer reads; `full` adds depth; `reference` is generated detail. */
export const DOC_TIERS = ['essential', 'full', 'reference'] as const;
export type DocTier = (typeof DOC_TIERS)[number];

export interface DocPage {
  slug: string;
  title: string;
  summary: string;
  category: DocCategory;
  tier: DocTier;
  keywords: string[];
  /** Markdown, starting with the page's `# Title`. */
  body: string;
  /** Sort key inside a category when listing (lower first); pages without one sort after, by title. */
  order: number | null;
  /** Where the page came from: a file path relative to the docs dir, or `generated:<what>`. */
  source: string;
}
