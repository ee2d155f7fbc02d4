/**
 * Open links through the fragment handoff (behaviour §3.4), in headless Chromium and over HTTP: the
 * publisher's `https://<site>/__/open#<key>` never sends the key in a request line or a Referer; the
 * page posts it to the broker, gets a short host-bound handoff, trades that for the door cookie and
 * lands on the clean URL `/`, where the unclaimed site shows its content instead of the notice.
 */
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, noBrowser, whySkipped as why } from '../helpers/browser.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

describe('open links through the fragment handoff', () => {
  let t: TestServer;
  let browser: Browser | undefined;
  let key: string;
  let openUrl: string;
  let host: string;

  beforeAll(async () => {
    t = await startServer();
    const fd = new FormData();
    fd.append('files', new Blob(['<h1>anon open</h1>']), 'index.html');
    const res = await request(`${t.url}/v1/publish`, { method: 'POST', body: fd });
    const body = (await res.body.json()) as any;
    expect(res.statusCode, JSON.stringify(body)).toBe(201);
    key = body.data.claim.key;
    openUrl = body.data.claim.openUrl;
    host = `${body.data.space.slug}.localhost`;
    if (!noBrowser) {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          '--disable-background-networking',
          '--host-resolver-rules=MAP *.localhost 127.0.0.1',
        ],
      });
    }
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const site = async (
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  ) => {
    const r = await request(`${t.url}${path}`, {
      method: (init.method ?? 'GET') as 'GET',
      headers: { host, ...init.headers },
      body: init.body,
    });
    return { status: r.statusCode, headers: r.headers, text: await r.body.text() };
  };

  it('the receipt’s Open link carries the key only in the fragment', () => {
    const u = new URL(openUrl);
    expect(u.pathname).toBe('/__/open');
    expect(u.search).toBe('');
    expect(decodeURIComponent(u.hash.slice(1))).toBe(key);
  });

  it('broker and handoff over HTTP: wrong keys, other hosts and forged handoffs open nothing', async () => {
    const page = await site('/__/open');
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(String(page.headers['content-security-policy'])).toMatch(/script-src 'nonce-[\w-]+'/);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const wrong = await site('/__/open', { method: 'POST', headers: form, body: 'key=sfc_wrong' });
    expect(wrong.status).toBe(404);
    expect(wrong.text).not.toContain('handoff');
    const ok = await site('/__/open', {
      method: 'POST',
      headers: form,
      body: `key=${encodeURIComponent(key)}`,
    });
    expect(ok.status).toBe(200);
    const next = JSON.parse(ok.text).next as string;
    expect(next).toMatch(/^\/__\/open\?handoff=door-handoff\./);
    // The handoff is bound to this host: on another space's host it is refused.
    const other = await request(`${t.url}${next}`, { headers: { host: 'someone-else.localhost' } });
    expect(other.statusCode).not.toBe(303);
    expect(other.headers['set-cookie']).toBeUndefined();
    await other.body.dump();
    // A forged handoff is refused.
    const forged = await site(next.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')));
    expect(forged.status).toBe(403);
    // The real one: door cookie, clean URL.
    const land = await site(next);
    expect(land.status).toBe(303);
    expect(land.headers.location).toBe('/');
    const cookie = String([land.headers['set-cookie']].flat()[0]);
    expect(cookie).toMatch(/^__spaces_door=door\./);
    expect(cookie).toContain('HttpOnly');
    expect((await site('/')).text).not.toContain('anon open');
    expect((await site('/', { headers: { cookie: cookie.split(';')[0]! } })).text).toContain(
      '<h1>anon open</h1>',
    );
    // Over HTTPS (behind a trusted proxy or TLS) the cookie is the host-bound `__Host-` one; the edge
    // accepts that name too.
  });

  it.skipIf(noBrowser)(
    `a fresh browser opens the link and lands on the clean URL${why}`,
    async () => {
      const context = await browser!.newContext();
      const page = await context.newPage();
      const sent: { url: string; referer?: string }[] = [];
      page.on('request', (r) => sent.push({ url: r.url(), referer: r.headers().referer }));
      const url = new URL(openUrl);
      const start = `http://${url.hostname}:${t.port}${url.pathname}${url.hash}`;
      await page.goto(start);
      await page.waitForURL(`http://${host}:${t.port}/`, { timeout: 15_000 });
      await expect.poll(() => page.content()).toContain('anon open');
      expect(page.url()).toBe(`http://${host}:${t.port}/`);
      // The key never left the browser in a URL or a Referer.
      expect(sent.length).toBeGreaterThanOrEqual(3);
      for (const r of sent) {
        expect(r.url).not.toContain(key);
        expect(r.referer ?? '').not.toContain(key);
      }
      const cookies = await context.cookies(`http://${host}:${t.port}/`);
      expect(cookies.map((c) => c.name)).toContain('__spaces_door');
      // A second fresh browser with no link sees only the notice.
      const stranger = await browser!.newContext();
      const p2 = await stranger.newPage();
      await p2.goto(`http://${host}:${t.port}/`);
      expect(await p2.content()).not.toContain('anon open');
      await stranger.close();
      await context.close();
    },
    30_000,
  );
});
