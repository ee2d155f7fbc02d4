import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml, type MetaConfig, renderMetaTags } from './inject.ts';

/**
 * Pages the service itself answers on site hostnames: self-contained HTML (inline CSS, no external
 * requests), every interpolated value escaped, strict security headers and `Cache-Control: no-store`.
 * Machine clients get a small problem document instead (behaviour §4.3): a request whose `Accept`
 * prefers JSON (or a `fetch` that doesn't ask for HTML) gets `application/problem+json`; a client that
 * accepts neither HTML nor JSON but plain text gets one text line.
 */

export const SYSTEM_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

/** `disabled.reasonCode` → status. */
export const DISABLED_STATUS: Readonly<Record<string, number>> = {
  anonymous_expired: 410,
  abuse_takedown: 451,
  tenant_suspended: 403,
  site_suspended: 403,
  author_removed: 410,
  publish_failed: 503,
  archived: 410,
};

const DISABLED_TEXT: Readonly<Record<string, { title: string; detail: string }>> = {
  anonymous_expired: {
    title: 'This space has expired',
    detail: 'It was published without an account and was not claimed in time, so it is no longer served.',
  },
  abuse_takedown: {
    title: 'Unavailable for legal reasons',
    detail: 'This space was taken down after a report about its content.',
  },
  tenant_suspended: {
    title: 'This space is suspended',
    detail:
      'The account that owns this space is suspended. Its owner can contact the operator of this service.',
  },
  site_suspended: {
    title: 'This space is suspended',
    detail: 'This space has been suspended by the operator of this service.',
  },
  author_removed: { title: 'This space was removed', detail: 'Its author removed this space.' },
  publish_failed: {
    title: 'This space is not available',
    detail: 'Its last publish did not complete, so there is nothing to serve yet.',
  },
  archived: {
    title: 'This space is archived',
    detail: 'Its owner archived this space; it is no longer served.',
  },
};

export interface ListingEntry {
  name: string;
  directory: boolean;
  size?: number;
}

export type SystemPage =
  | { kind: 'unknown-host'; host?: string }
  | { kind: 'not-found'; path?: string }
  | { kind: 'disabled'; reasonCode: string }
  | { kind: 'unclaimed'; expiresAt?: string | null; claimUrl?: string | null }
  | { kind: 'listing'; path: string; entries: ListingEntry[] }
  | { kind: 'proxy-disabled'; reason?: 'entitlement' | 'anonymous' }
  | { kind: 'method-not-allowed'; allow: string; method?: string }
  | { kind: 'bad-gateway'; detail?: string }
  | { kind: 'gateway-timeout' }
  | { kind: 'redirect-loop' }
  | { kind: 'error' };

export interface PageOptions {
  meta?: MetaConfig | null;
  /** Hide the "Served by Spaces" footer (only when the plan permits; the caller decides). */
  hideBranding?: boolean;
  /** Extra headers (e.g. `X-Robots-Tag`); they cannot weaken the security headers. */
  headers?: Readonly<Record<string, string>>;
}

export interface RenderedPage {
  status: number;
  /** A stable code for machine clients, e.g. `site_not_found`, `space_disabled`. */
  code: string;
  /** The visitor page id (behaviour §4.3): `404`, `denied`, `index`, … */
  page: string;
  title: string;
  detail: string;
  /** Body of the page (goes inside the layout). */
  content: string;
  extraHeaders?: Record<string, string>;
}

function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

function encodePathSegments(p: string): string {
  return p
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
}

/** What a page says; the layout and the content negotiation are applied by {@link renderPage}. */
export function describePage(page: SystemPage): RenderedPage {
  switch (page.kind) {
    case 'unknown-host':
      return {
        status: 404,
        code: 'site_not_found',
        page: '404',
        title: 'No site here',
        detail: 'This address does not belong to any space.',
        content: `<p>This address does not belong to any space${page.host ? ` (<code>${escapeHtml(page.host)}</code>)` : ''}. Check the link, or ask whoever shared it.</p>`,
      };
    case 'not-found':
      return {
        status: 404,
        code: 'page_not_found',
        page: '404',
        title: 'Page not found',
        detail: 'There is no page at this address.',
        content: `<p>There is no page at ${page.path ? `<code>${escapeHtml(page.path)}</code>` : 'this address'}.</p><p><a href="/">Go to the home page</a></p>`,
      };
    case 'disabled': {
      const status = DISABLED_STATUS[page.reasonCode] ?? 403;
      const text = DISABLED_TEXT[page.reasonCode] ?? {
        title: 'This space is not available',
        detail: 'This space is not being served.',
      };
      return {
        status,
        code: 'space_disabled',
        page: 'denied',
        title: text.title,
        detail: text.detail,
        content: `<p>${escapeHtml(text.detail)}</p>`,
      };
    }
    case 'unclaimed': {
      const when = page.expiresAt
        ? ` on <time datetime="${escapeHtml(page.expiresAt)}">${escapeHtml(page.expiresAt)}</time>`
        : ' soon';
      const claim =
        page.claimUrl && /^https?:\/\//i.test(page.claimUrl)
          ? `<p><a href="${escapeHtml(page.claimUrl)}">Claim this space</a> to keep it.</p>`
          : '<p>Its author can claim it with the claim link they received when publishing.</p>';
      return {
        status: 200,
        code: 'space_unclaimed',
        page: 'preview',
        title: 'This space is not claimed yet',
        detail: 'It was published without an account and will expire unless its author claims it.',
        content: `<p>This space was published without an account. It stops being served${when} unless its author claims it.</p>${claim}`,
      };
    }
    case 'listing': {
      const dir = page.path.endsWith('/') ? page.path : `${page.path}/`;
      const sorted = [...page.entries].sort((a, b) =>
        a.directory !== b.directory ? (a.directory ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
      const rows: string[] = [];
      if (dir !== '/') rows.push('<tr><td><a href="../">../</a></td><td></td></tr>');
      for (const e of sorted) {
        const href = encodePathSegments(e.name) + (e.directory ? '/' : '');
        const label = escapeHtml(e.name) + (e.directory ? '/' : '');
        const size = e.directory || e.size === undefined ? '' : escapeHtml(formatSize(e.size));
        rows.push(`<tr><td><a href="${escapeHtml(href)}">${label}</a></td><td class="n">${size}</td></tr>`);
      }
      return {
        status: 200,
        code: 'listing',
        page: 'index',
        title: `Index of ${dir}`,
        detail: `${page.entries.length} entries`,
        content: `<table><thead><tr><th>Name</th><th class="n">Size</th></tr></thead><tbody>${rows.join('')}</tbody></table>`,
      };
    }
    case 'proxy-disabled':
      return {
        status: 503,
        code: 'proxy_disabled',
        page: 'denied',
        title: 'This address is not available here',
        detail:
          page.reason === 'anonymous'
            ? 'This space forwards this address to another site, which spaces published without an account may not do.'
            : 'This space forwards this address to another site, which its plan does not include.',
        content:
          page.reason === 'anonymous'
            ? '<p>This space forwards this address to another site, which spaces published without an account may not do.</p>'
            : '<p>This space forwards this address to another site, which its plan does not include. The owner can enable external proxying; no republish is needed.</p>',
      };
    case 'method-not-allowed':
      return {
        status: 405,
        code: 'method_not_allowed',
        page: 'denied',
        title: 'Method not allowed',
        detail: `This address only answers ${page.allow}.`,
        content: `<p>This address only answers <code>${escapeHtml(page.allow)}</code>${page.method ? `, not <code>${escapeHtml(page.method)}</code>` : ''}.</p>`,
        extraHeaders: { Allow: page.allow },
      };
    case 'bad-gateway':
      return {
        status: 502,
        code: 'upstream_failed',
        page: 'error',
        title: 'Upstream error',
        detail: page.detail ?? 'The site this address forwards to could not be reached.',
        content: `<p>${escapeHtml(page.detail ?? 'The site this address forwards to could not be reached.')}</p>`,
      };
    case 'gateway-timeout':
      return {
        status: 504,
        code: 'upstream_timeout',
        page: 'error',
        title: 'Upstream timeout',
        detail: 'The site this address forwards to did not answer in time.',
        content: '<p>The site this address forwards to did not answer in time.</p>',
      };
    case 'redirect-loop':
      return {
        status: 508,
        code: 'redirect_loop',
        page: 'error',
        title: 'Redirect loop',
        detail: 'A rule of this site sends this address back to itself.',
        content:
          '<p>A rule of this site sends this address back to itself, so there is nothing to show. Its owner can fix the rule in <code>_redirects</code> or the site settings.</p>',
      };
    default:
      return {
        status: 500,
        code: 'internal_error',
        page: 'error',
        title: 'Something went wrong',
        detail: 'The server could not answer this request.',
        content: '<p>The server could not answer this request. Try again in a moment.</p>',
      };
  }
}

export const PAGE_CSS =
  ':root{color-scheme:light dark;--fg:#1b1d21;--muted:#5b6270;--bg:#f7f7f8;--card:#fff;--line:#e3e5e8;--accent:#3856d6}' +
  '@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--muted:#a2a9b4;--bg:#141518;--card:#1d1f23;--line:#2c2f35;--accent:#8aa2ff}}' +
  '*{box-sizing:border-box}body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;' +
  'font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg);padding:24px}' +
  'main{background:var(--card);border:1px solid var(--line);border-radius:14px;padding:32px 36px;max-width:44rem;width:100%;box-shadow:0 1px 3px rgba(0,0,0,.06)}' +
  'h1{font-size:1.45rem;margin:0 0 .6rem;letter-spacing:-.01em}.status{color:var(--muted);font-size:.85rem;font-weight:600;letter-spacing:.06em;text-transform:uppercase;margin:0 0 .4rem}' +
  'p{margin:.5rem 0;color:var(--muted)}a{color:var(--accent)}code{font:.9em ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}' +
  'table{width:100%;border-collapse:collapse;margin-top:.5rem}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line)}' +
  'th{font-size:.8rem;color:var(--muted);font-weight:600}td a{text-decoration:none;word-break:break-all}.n{text-align:right;white-space:nowrap;color:var(--muted)}' +
  'footer{margin-top:18px;font-size:.8rem;color:var(--muted)}';

export interface DocumentParts {
  status: number;
  title: string;
  description?: string;
  content: string;
  meta?: MetaConfig | null;
  hideBranding?: boolean;
  /** Extra markup for the head (already safe). */
  head?: string;
}

/** The shared page layout. */
export function renderDocument(parts: DocumentParts): string {
  const heading = parts.status >= 400 ? `<p class="status">Error ${parts.status}</p>` : '';
  const footer = parts.hideBranding ? '' : '<footer>Served by Spaces</footer>';
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    (parts.status >= 400 ? '<meta name="robots" content="noindex">' : '') +
    renderMetaTags(parts.meta, { title: parts.title, description: parts.description }) +
    `<style>${PAGE_CSS}</style>${parts.head ?? ''}</head><body><main>${heading}<h1>${escapeHtml(parts.title)}</h1>${parts.content}</main>${footer}</body></html>`
  );
}

export type ClientKind = 'html' | 'json' | 'text';

interface AcceptMatch {
  q: number;
  /** 2 exact type, 1 a `type/` wildcard, 0 the full wildcard, -1 not accepted at all. */
  specificity: number;
}

function acceptMatch(accept: string, types: string[]): AcceptMatch {
  let best: AcceptMatch = { q: 0, specificity: -1 };
  for (const part of accept.split(',')) {
    const [rawType, ...params] = part.split(';');
    const t = rawType.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (Number.isNaN(q)) continue;
    for (const want of types) {
      const [wt] = want.split('/');
      const specificity = t === want ? 2 : t === `${wt}/*` ? 1 : t === '*/*' ? 0 : -1;
      // The most specific range decides a type's q (RFC 9110 §12.5.1).
      if (specificity > best.specificity || (specificity === best.specificity && q > best.q)) {
        best = { q, specificity };
      }
    }
  }
  return best.specificity < 0 ? { q: 0, specificity: -1 } : best;
}

function beats(a: AcceptMatch, b: AcceptMatch): boolean {
  return a.q > b.q || (a.q === b.q && a.specificity > b.specificity);
}

/**
 * Who is asking: a browser (HTML), a program that wants JSON, or a plain-text client. Higher q wins;
 * on equal q the type named more specifically wins (`application/json` next to a full wildcard is a JSON client); a
 * full tie goes to HTML, so `curl` and browsers see the page.
 */
export function clientKind(req: IncomingMessage): ClientKind {
  const accept = req.headers.accept;
  if (!accept) return req.headers['sec-fetch-dest'] === 'empty' ? 'json' : 'html';
  const html = acceptMatch(accept, ['text/html', 'application/xhtml+xml']);
  const json = acceptMatch(accept, ['application/json', 'application/problem+json']);
  const text = acceptMatch(accept, ['text/plain']);
  if (req.headers['sec-fetch-dest'] === 'empty' && json.q > 0 && html.specificity < 2) return 'json';
  if (html.q > 0 && !beats(json, html) && !beats(text, html)) return 'html';
  if (json.q > 0 && !beats(text, json)) return 'json';
  if (text.q > 0) return 'text';
  return 'html';
}

export interface PageBody {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Renders a system page for this client: HTML, problem JSON or one text line. */
export function renderPage(req: IncomingMessage, page: SystemPage, opts: PageOptions = {}): PageBody {
  const d = describePage(page);
  const kind = clientKind(req);
  let type: string;
  let body: string;
  if (kind === 'json') {
    type = 'application/problem+json';
    body = JSON.stringify({
      type: 'about:blank',
      title: d.title,
      status: d.status,
      detail: d.detail,
      code: d.code,
      page: d.page,
    });
  } else if (kind === 'text') {
    type = 'text/plain; charset=utf-8';
    body = `${d.status} ${d.title}: ${d.detail}\n`;
  } else {
    type = 'text/html; charset=utf-8';
    body = renderDocument({
      status: d.status,
      title: d.title,
      description: d.detail,
      content: d.content,
      meta: opts.meta,
      hideBranding: opts.hideBranding,
    });
  }
  const headers: Record<string, string> = { ...opts.headers, ...d.extraHeaders, ...SYSTEM_PAGE_HEADERS };
  headers['Content-Type'] = type;
  headers['Content-Length'] = String(Buffer.byteLength(body));
  headers.Vary = 'Accept';
  return { status: d.status, headers, body };
}

/** Sends a system page (HEAD gets the headers only). */
export function sendSystemPage(
  req: IncomingMessage,
  res: ServerResponse,
  page: SystemPage,
  opts?: PageOptions,
): void {
  const { status, headers, body } = renderPage(req, page, opts);
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** A small HTML page for a refused request (blocked, expired link, bad address). */
export function sendBlockedPage(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
): void {
  const body = renderDocument({ status, title, content: `<p>${detail}</p>` });
  res.writeHead(status, {
    ...SYSTEM_PAGE_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** 405 with `Allow` for a method a static file doesn't answer. */
export function sendMethodNotAllowed(req: IncomingMessage, res: ServerResponse, allow: string): void {
  sendSystemPage(req, res, { kind: 'method-not-allowed', allow, method: req.method });
}
