import http from 'node:http';
import type { Logger } from 'pino';
import type { Browser, Route } from 'playwright-core';

/** The size every thumbnail is taken at (issue 23). */
export const THUMBNAIL_VIEWPORT = { width: 1280, height: 800 } as const;
/** Largest response body handed to the page; anything bigger is refused. */
const MAX_RESPONSE_BYTES = 25 * 1024 * 1024;

/** Where the page's requests are answered: this server's own HTTP listener. */
export interface LocalListener {
  host: string;
  port: number;
}

/**
 * Takes pictures of sites in headless Chromium (Debian's, driven by playwright-core). One browser is
 * started on first use and reused; every picture gets a fresh context that is closed afterwards.
 *
 * The page is user content, so Chromium never touches the network: every request the page makes is
 * intercepted, and only those for the site's own hostname are answered — by this server's listener,
 * with the site's `Host` — while all others (other hosts, internal addresses, anything) are aborted.
 * Traffic interception can't see (WebSockets, WebRTC) goes to a proxy that does not exist, with the
 * loopback bypass turned off; service workers are blocked.
 */
export class ChromiumThumbnails {
  private browser: Promise<Browser> | null = null;

  constructor(
    private readonly executablePath: string,
    private readonly timeoutMs: number,
    private readonly log?: Logger,
  ) {}

  private launch(): Promise<Browser> {
    if (!this.browser) {
      const started = import('playwright-core').then(({ chromium }) =>
        chromium.launch({
          executablePath: this.executablePath,
          timeout: this.timeoutMs,
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--disable-extensions',
            '--mute-audio',
            // Whatever escapes request interception reaches nothing: a dead proxy, loopback included.
            '--proxy-server=http://127.0.0.1:9',
            '--proxy-bypass-list=<-loopback>',
            '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
            '--webrtc-ip-handling-policy=disable_non_proxied_udp',
          ],
        }),
      );
      this.browser = started;
      started.then(
        (b) =>
          b.on('disconnected', () => {
            if (this.browser === started) this.browser = null;
          }),
        () => {
          if (this.browser === started) this.browser = null;
        },
      );
    }
    return this.browser;
  }

  /**
   * A PNG of `siteUrl`'s page at 1280×800, its requests answered by `local` (see the class) with
   * `cookie` added (the site's access cookie, so private sites render too; the page never sees it).
   */
  async render(
    siteUrl: string,
    local: LocalListener,
    cookie: string | null,
    signal?: AbortSignal,
  ): Promise<Buffer> {
    const site = new URL(siteUrl);
    const browser = await this.launch();
    const context = await browser.newContext({
      viewport: THUMBNAIL_VIEWPORT,
      serviceWorkers: 'block',
      acceptDownloads: false,
      javaScriptEnabled: true,
    });
    const timer = setTimeout(() => void context.close().catch(() => {}), this.timeoutMs);
    const onAbort = () => void context.close().catch(() => {});
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await context.route('**/*', (route) => this.answer(route, site.hostname, local, cookie));
      const page = await context.newPage();
      page.setDefaultTimeout(this.timeoutMs);
      await page.goto(site.href, { waitUntil: 'load', timeout: this.timeoutMs });
      // Fonts and late layout: a short settle, bounded by the same timeout.
      await page.waitForLoadState('networkidle', { timeout: Math.min(2000, this.timeoutMs) }).catch(() => {});
      return await page.screenshot({ type: 'png', timeout: this.timeoutMs });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      await context.close().catch(() => {});
    }
  }

  /** Answers the site's own requests from the local listener; refuses every other one. */
  private async answer(
    route: Route,
    hostname: string,
    local: LocalListener,
    cookie: string | null,
  ): Promise<void> {
    const req = route.request();
    let url: URL;
    try {
      url = new URL(req.url());
    } catch {
      return route.abort('blockedbyclient');
    }
    if (url.hostname !== hostname || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      return route.abort('blockedbyclient');
    }
    if (req.method() !== 'GET' && req.method() !== 'HEAD') return route.abort('blockedbyclient');
    try {
      const res = await localGet(local, hostname, url.pathname + url.search, req.method(), cookie);
      await route.fulfill(res);
    } catch (err) {
      this.log?.debug({ err, url: url.href }, 'thumbnail request failed');
      await route.abort('failed').catch(() => {});
    }
  }

  async close(): Promise<void> {
    const b = this.browser;
    this.browser = null;
    if (b) await (await b.catch(() => null))?.close().catch(() => {});
  }
}

/** One GET to this server's listener as if for `hostname`, the body read whole (bounded). */
function localGet(
  local: LocalListener,
  hostname: string,
  pathAndQuery: string,
  method: string,
  cookie: string | null,
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: local.host,
        port: local.port,
        method,
        path: pathAndQuery,
        headers: {
          host: hostname,
          'user-agent': 'Spaces thumbnails',
          'accept-encoding': 'identity',
          ...(cookie ? { cookie } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new Error('response too large'));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) {
            if (v === undefined || k === 'set-cookie' || k === 'transfer-encoding' || k === 'connection')
              continue;
            headers[k] = Array.isArray(v) ? v.join(', ') : v;
          }
          resolve({ status: res.statusCode ?? 502, headers, body: Buffer.concat(chunks) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
