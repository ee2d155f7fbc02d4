import { createHash } from 'node:crypto';
import { Marked } from 'marked';
import type { DocPage } from './types.ts';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Only links that stay on http(s), a relative path or an in-page anchor survive. */
function safeHref(href: string): string | null {
  const h = href.trim();
  if (/^(https?:|mailto:)/i.test(h) || /^[/#.?]/.test(h) || !/^[a-z][a-z0-9+.-]*:/i.test(h)) return h;
  return null;
}

/**
 * Markdown renderer for our pages. The Markdown is ours, but raw HTML in it is still escaped and
 * `javascript:` style links dropped, so a slip in a page can't become script on the docs origin.
 */
const markdown = new Marked({
  gfm: true,
  renderer: {
    html({ text }) {
      return escapeHtml(text);
    },
    link({ href, title, tokens }) {
      const text = this.parser.parseInline(tokens);
      const safe = safeHref(href);
      if (safe === null) return text;
      return `<a href="${escapeHtml(safe)}"${title ? ` title="${escapeHtml(title)}"` : ''}>${text}</a>`;
    },
    image({ href, text }) {
      const safe = safeHref(href);
      return safe === null ? escapeHtml(text) : `<img src="${escapeHtml(safe)}" alt="${escapeHtml(text)}">`;
    },
  },
});

export function markdownToHtml(md: string): string {
  return markdown.parse(md, { async: false }) as string;
}

const STYLE = `body{font:16px/1.55 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fff}
header,main,footer{max-width:52rem;margin:0 auto;padding:0 1.25rem}
header{padding-top:1rem;border-bottom:1px solid #e5e5e5}header a{color:inherit;text-decoration:none;font-weight:600}
main{padding-bottom:2rem}a{color:#0a58ca}code,pre{font:0.9em ui-monospace,SFMono-Regular,Menlo,monospace}
pre{background:#f6f8fa;padding:0.75rem;overflow:auto;border-radius:6px}code{background:#f6f8fa;padding:0.1em 0.25em;border-radius:4px}
pre code{padding:0}table{border-collapse:collapse;display:block;overflow:auto}th,td{border:1px solid #ddd;padding:0.3rem 0.6rem;text-align:left;vertical-align:top}
.meta{color:#666;font-size:0.9em}ul.index li{margin:0.25rem 0}footer{color:#666;font-size:0.85em;padding-bottom:2rem}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}pre,code{background:#1e1e1e}th,td{border-color:#333}a{color:#6ea8fe}}`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** No scripts, no frames, no forms; only our own inline style (by hash) and same-origin images. */
export const DOCS_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

export function htmlDocument(title: string, bodyHtml: string, alternateMd?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} — Spaces docs</title>
${alternateMd ? `<link rel="alternate" type="text/markdown" href="${escapeHtml(alternateMd)}">\n` : ''}<style>${STYLE}</style>
</head>
<body>
<header><p><a href="/docs">Spaces documentation</a></p></header>
<main>
${bodyHtml}
</main>
<footer><p>Also as <a href="/llms.txt">llms.txt</a> · API: <a href="/v1/docs">/v1/docs</a> · <a href="/v1/openapi.json">OpenAPI</a></p></footer>
</body>
</html>
`;
}

export function pageHtml(page: DocPage): string {
  const meta = `<p class="meta">${escapeHtml(page.category)} · ${escapeHtml(page.tier)}${page.keywords.length ? ` · ${page.keywords.map(escapeHtml).join(', ')}` : ''}</p>`;
  const html = markdownToHtml(page.body);
  // The meta line goes right after the page's h1.
  const withMeta = html.replace(/<\/h1>\n?/, (m) => `${m}${meta}\n`);
  return htmlDocument(page.title, withMeta, `/docs/${page.slug}.md`);
}

/** Parses an Accept header into media ranges with their q-values. */
function acceptRanges(accept: string): Array<{ type: string; q: number }> {
  return accept
    .split(',')
    .map((part) => {
      const [type, ...params] = part.trim().split(';');
      let q = 1;
      for (const p of params) {
        const [k, v] = p.trim().split('=');
        if (k?.toLowerCase() === 'q') q = Number.parseFloat(v ?? '1');
      }
      return { type: (type ?? '').trim().toLowerCase(), q: Number.isFinite(q) ? q : 0 };
    })
    .filter((r) => r.type);
}

/** The q-value the ranges give `type` (most specific range wins), and where that range was listed. */
function qualityOf(ranges: Array<{ type: string; q: number }>, type: string): { q: number; at: number } {
  const [major] = type.split('/');
  let best = { q: 0, at: Number.MAX_SAFE_INTEGER };
  let specificity = -1;
  ranges.forEach((r, at) => {
    const s = r.type === type ? 2 : r.type === `${major}/*` ? 1 : r.type === '*/*' ? 0 : -1;
    if (s > specificity) {
      specificity = s;
      best = { q: r.q, at };
    }
  });
  return best;
}

/**
 * True when the client ranks `text/markdown` above the default representation (`text/html` for
 * pages, `application/json` for the API), or equal but named first. Browsers never do.
 */
export function prefersMarkdown(accept: string | undefined, over = 'text/html'): boolean {
  return prefers(accept, 'text/markdown', over);
}

/** True when the client ranks `type` above `over` in `Accept`, or equal but named first. */
export function prefers(accept: string | undefined, type: string, over: string): boolean {
  if (!accept) return false;
  const ranges = acceptRanges(accept);
  const wanted = qualityOf(ranges, type);
  const other = qualityOf(ranges, over);
  // Equal q-values: the type the client named first wins (`text/markdown, text/html`).
  return wanted.q > 0 && (wanted.q > other.q || (wanted.q === other.q && wanted.at < other.at));
}
