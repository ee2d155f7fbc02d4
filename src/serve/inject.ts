import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * HTML injection. Snippets go before `</head>`, right after the `<body …>` open tag and before the
 * last `</body>`. The injector streams: it never holds more than a few bytes of lookahead, plus the
 * tail after a `</body>` (bounded by {@link MAX_HELD_TAIL}) so the body-end snippet lands before the
 * *last* `</body>`.
 *
 * Fallbacks when tags are missing: no `</head>` → the head snippet goes before `<body`, or is appended
 * at the end when there is no `<body` either; no `<body>` → the body-start snippet is appended; no
 * `</body>` → the body-end snippet is appended. Matching is ASCII case-insensitive and works on
 * bytes (latin1), so any encoding that keeps ASCII as ASCII (UTF-8 included) passes through intact.
 * Tags inside comments or scripts are not told apart from real ones.
 */
export interface Injection {
  head: string;
  bodyStart: string;
  bodyEnd: string;
  /** A short digest of the snippets; part of the injected response's ETag and cache key. */
  key: string;
}

export interface InjectionParts {
  head?: string;
  bodyStart?: string;
  bodyEnd?: string;
}

/** Longest tail kept after a `</body>` while waiting to see whether another one follows. */
export const MAX_HELD_TAIL = 64 * 1024;
/** Longest `<body …>` open tag waited for. */
const MAX_BODY_TAG = 8 * 1024;
const LOOKAHEAD = 7;

export function makeInjection(parts: InjectionParts): Injection {
  const head = parts.head ?? '';
  const bodyStart = parts.bodyStart ?? '';
  const bodyEnd = parts.bodyEnd ?? '';
  const key = createHash('sha256').update(`${head}\0${bodyStart}\0${bodyEnd}`).digest('hex').slice(0, 16);
  return { head, bodyStart, bodyEnd, key };
}

export function isEmptyInjection(inj: Injection): boolean {
  return inj.head === '' && inj.bodyStart === '' && inj.bodyEnd === '';
}

function findBodyOpen(lower: string, from = 0): number {
  let i = lower.indexOf('<body', from);
  while (i !== -1) {
    const next = lower.charCodeAt(i + 5);
    // `<body` must end the tag name: whitespace, `>` or `/`. NaN (end of text) means "not sure yet".
    if (
      Number.isNaN(next) ||
      next === 0x3e ||
      next === 0x2f ||
      next === 0x20 ||
      (next >= 0x09 && next <= 0x0d)
    ) {
      return i;
    }
    i = lower.indexOf('<body', i + 1);
  }
  return -1;
}

/** The injection state machine over latin1 text; shared by the stream and the buffer forms. */
class InjectorCore {
  private pending = '';
  private headDone = false;
  private bodyStartDone = false;
  private bodyEndDone = false;
  /** `pending` starts with a `</body>` candidate. */
  private holding = false;
  private readonly head: string;
  private readonly bodyStart: string;
  private readonly bodyEnd: string;

  constructor(inj: Injection) {
    // Snippets are text; converting to latin1 bytes-as-chars keeps them intact through the output path.
    this.head = Buffer.from(inj.head, 'utf8').toString('latin1');
    this.bodyStart = Buffer.from(inj.bodyStart, 'utf8').toString('latin1');
    this.bodyEnd = Buffer.from(inj.bodyEnd, 'utf8').toString('latin1');
    this.headDone = this.head === '';
    this.bodyStartDone = this.bodyStart === '';
    this.bodyEndDone = this.bodyEnd === '';
  }

  push(text: string, final: boolean): string {
    this.pending += text;
    let out = '';
    for (;;) {
      const p = this.pending;
      if (!this.headDone) {
        const lower = p.toLowerCase();
        const iHead = lower.indexOf('</head>');
        const iBody = findBodyOpen(lower);
        const at = iHead !== -1 && (iBody === -1 || iHead < iBody) ? iHead : iBody;
        if (at !== -1 && !(at === iBody && at + 5 >= p.length && !final)) {
          out += p.slice(0, at) + this.head;
          this.pending = p.slice(at);
          this.headDone = true;
          continue;
        }
        if (final) break;
        out += this.keepTail(LOOKAHEAD);
        return out;
      }
      if (!this.bodyStartDone) {
        const lower = p.toLowerCase();
        const i = findBodyOpen(lower);
        if (i === -1 || (i + 5 >= p.length && !final)) {
          if (final) break;
          out += this.keepTail(LOOKAHEAD);
          return out;
        }
        const j = p.indexOf('>', i);
        if (j === -1) {
          if (final || p.length - i > MAX_BODY_TAG) {
            // An unterminated `<body`: give up on placing it and append at the end instead.
            out += p;
            this.pending = '';
            if (final) break;
            return out;
          }
          out += p.slice(0, i);
          this.pending = p.slice(i);
          return out;
        }
        out += p.slice(0, j + 1) + this.bodyStart;
        this.pending = p.slice(j + 1);
        this.bodyStartDone = true;
        continue;
      }
      if (!this.bodyEndDone) {
        const lower = p.toLowerCase();
        if (this.holding) {
          const k = lower.indexOf('</body>', 7);
          if (k !== -1) {
            out += p.slice(0, k);
            this.pending = p.slice(k);
            continue;
          }
          if (final) break;
          if (p.length > MAX_HELD_TAIL) {
            out += this.bodyEnd + p;
            this.pending = '';
            this.bodyEndDone = true;
            this.holding = false;
          }
          return out;
        }
        const i = lower.indexOf('</body>');
        if (i !== -1) {
          out += p.slice(0, i);
          this.pending = p.slice(i);
          this.holding = true;
          continue;
        }
        if (final) break;
        out += this.keepTail(LOOKAHEAD);
        return out;
      }
      out += p;
      this.pending = '';
      return out;
    }
    // End of document: whatever wasn't placed is appended, in document order.
    let tail = '';
    if (!this.headDone) tail += this.head;
    if (!this.bodyStartDone) tail += this.bodyStart;
    if (this.holding) {
      out += tail + this.bodyEnd + this.pending;
    } else {
      out += this.pending + tail + (this.bodyEndDone ? '' : this.bodyEnd);
    }
    this.pending = '';
    this.headDone = this.bodyStartDone = this.bodyEndDone = true;
    this.holding = false;
    return out;
  }

  private keepTail(n: number): string {
    const p = this.pending;
    if (p.length <= n) return '';
    this.pending = p.slice(p.length - n);
    return p.slice(0, p.length - n);
  }
}

/** A Transform that injects into a streamed HTML document. */
export function createHtmlInjector(inj: Injection): Transform {
  const core = new InjectorCore(inj);
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
      const out = core.push(Buffer.isBuffer(chunk) ? chunk.toString('latin1') : String(chunk), false);
      cb(null, out ? Buffer.from(out, 'latin1') : undefined);
    },
    flush(cb: TransformCallback) {
      const out = core.push('', true);
      cb(null, out ? Buffer.from(out, 'latin1') : undefined);
    },
  });
}

/** Injects into a whole document held in memory (the cached-file path). */
export function injectHtml(buf: Buffer, inj: Injection): Buffer {
  if (isEmptyInjection(inj)) return buf;
  return Buffer.from(new InjectorCore(inj).push(buf.toString('latin1'), true), 'latin1');
}

// ---------------------------------------------------------------------------------------------
// Building the snippets from a space's settings.

export interface JavascriptTag {
  id?: string;
  name?: string;
  enabled?: boolean;
  code: string;
}

/** The parts of SpaceConfig that decide injection. */
export interface InjectionConfig {
  superpowers?: {
    enabled?: boolean;
    disable_all_injection?: boolean;
    vendorAnalytics?: { enabled?: boolean; measurementId?: string };
    vendorTagManager?: { enabled?: boolean; containerId?: string };
    javascriptTags?: JavascriptTag[];
  } | null;
  collab?: { ui?: 'default' | 'custom' } | null;
  inject?: { head?: string[]; bodyStart?: string[]; bodyEnd?: string[]; noscript?: string[] } | null;
}

/** Measurement and container ids: letters, digits, `_` and `-` only (e.g. `G-ABC123`, `GTM-XYZ9`). */
export const VENDOR_ID = /^[A-Za-z0-9_-]{1,64}$/;

export const ANALYTICS_SCRIPT_ORIGIN = 'https://www.googletagmanager.com';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;',
  );
}

/** A JSON string literal safe inside `<script>` (no `</script>`, no `<!--`, no line separators). */
export function scriptString(s: string): string {
  return JSON.stringify(s)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export interface BuiltInjection extends Injection {
  /** Settings that were skipped because they were unsafe (e.g. an id with a quote in it). */
  skipped: string[];
}

/**
 * The snippets for a space, in this stable order:
 * head — 1. vendorAnalytics loader + config (measurementId), 2. vendorTagManager loader (containerId),
 * 3. enabled `superpowers.javascriptTags` in array order (`code` verbatim inside a `<script>` whose
 * `data-tag-id` attribute is the escaped `id`), 4. the collab stylesheet when `collab.ui` is `custom`,
 * 5. `inject.head` strings; body start — 6. the tag manager's `<noscript>` frame, 7. `inject.bodyStart`,
 * 8. `inject.noscript` wrapped in `<noscript>`; body end — 9. `inject.bodyEnd`.
 *
 * `superpowers.disable_all_injection: true` suppresses everything. `superpowers.enabled: false`
 * suppresses 1–3 only (the collab stylesheet and the author's own `inject` entries are not
 * superpowers).
 */
export function buildInjection(config: InjectionConfig | null | undefined): BuiltInjection {
  const head: string[] = [];
  const bodyStart: string[] = [];
  const bodyEnd: string[] = [];
  const skipped: string[] = [];
  const sp = config?.superpowers ?? null;
  if (sp?.disable_all_injection === true) return { ...makeInjection({}), skipped };
  if (sp && sp.enabled !== false) {
    const ga = sp.vendorAnalytics;
    if (ga && ga.enabled !== false && ga.measurementId !== undefined) {
      if (VENDOR_ID.test(ga.measurementId)) {
        const id = ga.measurementId;
        head.push(
          `<script async src="${ANALYTICS_SCRIPT_ORIGIN}/gtag/js?id=${encodeURIComponent(id)}"></script>` +
            `<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}` +
            `gtag('js',new Date());gtag('config',${scriptString(id)});</script>`,
        );
      } else skipped.push('superpowers.vendorAnalytics.measurementId');
    }
    const tm = sp.vendorTagManager;
    if (tm && tm.enabled !== false && tm.containerId !== undefined) {
      if (VENDOR_ID.test(tm.containerId)) {
        const id = tm.containerId;
        head.push(
          `<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),event:'gtm.js'});` +
            `var f=d.getElementsByTagName(s)[0],j=d.createElement(s),dl=l!='dataLayer'?'&l='+l:'';j.async=true;` +
            `j.src='${ANALYTICS_SCRIPT_ORIGIN}/gtm.js?id='+i+dl;f.parentNode.insertBefore(j,f);` +
            `})(window,document,'script','dataLayer',${scriptString(id)});</script>`,
        );
        bodyStart.push(
          `<noscript><iframe src="${ANALYTICS_SCRIPT_ORIGIN}/ns.html?id=${encodeURIComponent(id)}" height="0" width="0" style="display:none;visibility:hidden"></iframe></noscript>`,
        );
      } else skipped.push('superpowers.vendorTagManager.containerId');
    }
    for (const tag of sp.javascriptTags ?? []) {
      if (tag.enabled === false || typeof tag.code !== 'string' || tag.code === '') continue;
      const idAttr = tag.id ? ` data-tag-id="${escapeHtml(tag.id)}"` : '';
      head.push(`<script${idAttr}>${tag.code}</script>`);
    }
  }
  if (config?.collab?.ui === 'custom') head.push('<link rel="stylesheet" href="/__service/collab.css">');
  const inj = config?.inject;
  if (inj) {
    head.push(...(inj.head ?? []));
    bodyStart.push(...(inj.bodyStart ?? []));
    for (const n of inj.noscript ?? []) bodyStart.push(`<noscript>${n}</noscript>`);
    bodyEnd.push(...(inj.bodyEnd ?? []));
  }
  return {
    ...makeInjection({ head: head.join(''), bodyStart: bodyStart.join(''), bodyEnd: bodyEnd.join('') }),
    skipped,
  };
}

// ---------------------------------------------------------------------------------------------
// Head tags for pages the service renders itself (listings, system pages).

export interface MetaConfig {
  title?: string;
  description?: string;
  image?: string;
  favicon?: string;
}

/** Only `http(s)` absolute URLs or root-relative paths are used as links; anything else is dropped. */
export function safeLink(url: string | undefined): string | null {
  if (!url) return null;
  if (/^https?:\/\//i.test(url) || (url.startsWith('/') && !url.startsWith('//') && !url.startsWith('/\\'))) {
    return /[\u0000-\u001f\s]/.test(url) ? null : url;
  }
  return null;
}

/**
 * Head tags from `meta` that fill what a service-rendered page lacks. The page says which tags it
 * already has; the page's own title is combined with `meta.title` (`Not found · My site`).
 */
export function renderMetaTags(
  meta: MetaConfig | null | undefined,
  page: { title: string; description?: string },
): string {
  const title = meta?.title ? `${page.title} · ${meta.title}` : page.title;
  let out = `<title>${escapeHtml(title)}</title>`;
  const description = page.description ?? meta?.description;
  if (description) out += `<meta name="description" content="${escapeHtml(description)}">`;
  out += `<meta property="og:title" content="${escapeHtml(title)}">`;
  if (meta?.description) out += `<meta property="og:description" content="${escapeHtml(meta.description)}">`;
  const image = safeLink(meta?.image);
  if (image) out += `<meta property="og:image" content="${escapeHtml(image)}">`;
  const favicon = safeLink(meta?.favicon);
  if (favicon) out += `<link rel="icon" href="${escapeHtml(favicon)}">`;
  return out;
}
