import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { DOC_CATEGORIES, DOC_TIERS, type DocCategory, type DocPage, type DocTier } from './types.ts';

/** The repository's `docs/` directory (this file is `src/domain/docs/loader.ts`). */
export const DEFAULT_DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs');

/** Where the parsed pages of `DEFAULT_DOCS_DIR` are cached (next to the server's bundle). */
export const DEFAULT_DOCS_CACHE = path.resolve(
  DEFAULT_DOCS_DIR,
  '../node_modules/.cache/spaces-docs/pages.json',
);

/** A page that can't be served as written; start-up stops with this message. */
export class DocsError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`docs/${file}: ${message}`);
    this.name = 'DocsError';
  }
}

/** Lowercase segments of letters, digits, `-` and `_`, joined by `/`: `errors/not_found`, `guides/x`. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:[-_][a-z0-9]+)*(?:\/[a-z0-9]+(?:[-_][a-z0-9]+)*)*$/;

const FIELDS = new Set(['slug', 'title', 'summary', 'category', 'tier', 'keywords', 'order']);
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

function listMarkdown(dir: string, rel = ''): string[] {
  const out: string[] = [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && rel === '') return [];
    throw err;
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.name.startsWith('.')) continue;
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listMarkdown(dir, p));
    else if (e.isFile() && e.name.endsWith('.md')) out.push(p);
  }
  return out;
}

function nonEmptyString(file: string, meta: Record<string, unknown>, key: string, max: number): string {
  const v = meta[key];
  if (typeof v !== 'string' || v.trim() === '')
    throw new DocsError(file, `front matter "${key}" must be a non-empty string`);
  if (v.length > max) throw new DocsError(file, `front matter "${key}" is longer than ${max} characters`);
  return v.trim();
}

/** Parses one Markdown file with YAML front matter; returns null for a file without front matter. */
export function parsePage(file: string, text: string): DocPage | null {
  const m = FRONT_MATTER.exec(text.replace(/^\uFEFF/, ''));
  if (!m) {
    if (text.startsWith('---')) throw new DocsError(file, 'front matter is not closed by a "---" line');
    return null;
  }
  let meta: unknown;
  try {
    meta = YAML.parse(m[1]!);
  } catch (err) {
    throw new DocsError(file, `front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!meta || typeof meta !== 'object' || Array.isArray(meta))
    throw new DocsError(file, 'front matter must be a YAML mapping');
  const fm = meta as Record<string, unknown>;
  for (const key of Object.keys(fm)) {
    if (!FIELDS.has(key))
      throw new DocsError(file, `unknown front matter field "${key}" (allowed: ${[...FIELDS].join(', ')})`);
  }
  const slug = nonEmptyString(file, fm, 'slug', 200);
  if (!SLUG_PATTERN.test(slug))
    throw new DocsError(
      file,
      `slug "${slug}" must be lowercase letters, digits, "-" or "_", in segments separated by "/"`,
    );
  const title = nonEmptyString(file, fm, 'title', 200);
  const summary = nonEmptyString(file, fm, 'summary', 1000);
  const category = fm.category;
  if (!DOC_CATEGORIES.includes(category as DocCategory))
    throw new DocsError(
      file,
      `category must be one of ${DOC_CATEGORIES.join(', ')}, got ${JSON.stringify(category)}`,
    );
  const tier = fm.tier;
  if (!DOC_TIERS.includes(tier as DocTier))
    throw new DocsError(file, `tier must be one of ${DOC_TIERS.join(', ')}, got ${JSON.stringify(tier)}`);
  // YAML reads `- 404` as a number; a keyword is its text either way.
  const keywords = Array.isArray(fm.keywords)
    ? fm.keywords.map((k) => (typeof k === 'number' ? String(k) : k))
    : fm.keywords;
  if (keywords === undefined)
    throw new DocsError(file, 'front matter "keywords" is missing (a list, may be empty)');
  if (!Array.isArray(keywords) || keywords.some((k) => typeof k !== 'string' || k.trim() === ''))
    throw new DocsError(file, 'keywords must be a list of non-empty strings');
  let order: number | null = null;
  if (fm.order !== undefined) {
    if (!Number.isInteger(fm.order)) throw new DocsError(file, 'order must be an integer');
    order = fm.order as number;
  }
  const rest = text
    .replace(/^\uFEFF/, '')
    .slice(m[0].length)
    .trim();
  return {
    slug,
    title,
    summary,
    category: category as DocCategory,
    tier: tier as DocTier,
    keywords: (keywords as string[]).map((k) => k.trim()),
    body: withTitle(title, rest),
    order,
    source: file,
  };
}

/** Every page starts with its `# Title`, so the Markdown stands alone wherever it is served. */
export function withTitle(title: string, body: string): string {
  const b = body.trim();
  return /^#\s/.test(b) ? `${b}\n` : `# ${title}\n\n${b}\n`;
}

/**
 * Reads every `**\/*.md` with front matter under `dir`. Throws a `DocsError` naming the file for a bad
 * page or a slug used twice, so a broken docs tree stops the server at start instead of serving holes.
 *
 * With `cacheFile`, pages already parsed from the same file name and bytes are taken from it and the
 * file is rewritten when a page was parsed anew: parsing the front matter of every page was ~100 ms of
 * each cold start. Only valid pages are ever cached, so a broken page still stops the start. A cache
 * that can't be read or written is ignored.
 */
export function loadDocsDir(dir: string, cacheFile: string | null = null): DocPage[] {
  const pages: DocPage[] = [];
  const seen = new Map<string, string>();
  const cached = cacheFile ? readPageCache(cacheFile) : new Map<string, DocPage | null>();
  const fresh = new Map<string, DocPage | null>();
  for (const file of listMarkdown(dir)) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    const key = createHash('sha256').update(file).update('\0').update(text).digest('base64url');
    const page = cached.has(key) ? cached.get(key)! : parsePage(file, text);
    fresh.set(key, page);
    if (!page) continue;
    const other = seen.get(page.slug);
    if (other) throw new DocsError(file, `slug "${page.slug}" is already used by docs/${other}`);
    seen.set(page.slug, file);
    pages.push(page);
  }
  if (cacheFile && [...fresh.keys()].some((k) => !cached.has(k))) writePageCache(cacheFile, fresh);
  return pages;
}

function readPageCache(file: string): Map<string, DocPage | null> {
  try {
    return new Map(
      Object.entries(JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, DocPage | null>),
    );
  } catch {
    return new Map();
  }
}

function writePageCache(file: string, pages: Map<string, DocPage | null>): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(Object.fromEntries(pages)));
    fs.renameSync(tmp, file);
  } catch {
    // A read-only install parses the pages at every start instead.
  }
}
