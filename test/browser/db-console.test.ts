/**
 * The database console in headless Chromium: the single-use URL opens the console, the token leaves
 * the address bar and is never sent in a URL or a Referer, a query shows its rows in a table, a write
 * reaches the handler's `env.DB`, a reload keeps the session (it lives in the tab), and the same URL
 * opened again in a fresh browser is refused.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, noBrowser, whySkipped as why } from '../helpers/browser.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

describe('the database console', () => {
  let t: TestServer;
  let browser: Browser | undefined;
  let spaceId: string;
  const host = 'db-console.localhost';

  beforeAll(async () => {
    t = await startServer();
    const space = await createSpace(t, undefined, { slug: 'db-console', access: 'public' });
    spaceId = space.id;
    await publishViaVersions(t, spaceId, {
      'index.html': 'home',
      'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
      'handler.js': `export default { async fetch(req, env) {
        return Response.json((await env.DB.prepare('SELECT body FROM notes ORDER BY id').all()).results.map((r) => r.body));
      } };`,
    });
    const m = await t.api('POST', `/v1/spaces/${spaceId}/db/migrate`, {
      body: {
        migrations: [
          {
            name: '0001.sql',
            sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('<b>one</b>'), ('two')",
          },
        ],
      },
    });
    expect(m.status).toBe(200);
    if (!noBrowser) browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it.skipIf(noBrowser)(
    `opens once, runs statements and shows rows as text${why}`,
    async () => {
      const { url } = (await t.api('GET', `/v1/spaces/${spaceId}/db/console`)).body.data;
      const token = new URL(url).hash.slice(1);
      const context = await browser!.newContext();
      const page = await context.newPage();
      const sent: { url: string; referer?: string }[] = [];
      page.on('request', (r) => sent.push({ url: r.url(), referer: r.headers().referer }));
      await page.goto(url);
      await page.locator('#q').waitFor({ state: 'visible', timeout: 10_000 });
      expect(page.url()).toBe(url.split('#')[0]);
      await expect.poll(() => page.locator('#space').textContent()).toBe(spaceId);
      await page.fill('#sql', 'SELECT id, body FROM notes ORDER BY id');
      await page.click('button[type=submit]');
      await page.locator('#out table').waitFor({ timeout: 10_000 });
      expect(await page.locator('#out th').allTextContents()).toEqual(['id', 'body']);
      expect(await page.locator('#out td').allTextContents()).toEqual(['1', '<b>one</b>', '2', 'two']);
      // Values are text, never markup.
      expect(await page.locator('#out b').count()).toBe(0);
      await page.fill('#sql', "UPDATE notes SET body = 'edited' WHERE id = 2");
      await page.click('button[type=submit]');
      await expect.poll(() => page.locator('#status').textContent()).toContain('1 row(s) changed');
      const seen = await t.api('GET', '/api', { token: null, host });
      expect(seen.body).toEqual(['<b>one</b>', 'edited']);
      // An error is shown, not thrown.
      await page.fill('#sql', 'SELECT * FROM nowhere');
      await page.click('button[type=submit]');
      await expect.poll(() => page.locator('#status').textContent()).toContain('no such table');
      // A reload keeps the session.
      await page.reload();
      await page.locator('#q').waitFor({ state: 'visible', timeout: 10_000 });
      for (const r of sent) {
        expect(r.url).not.toContain(token);
        expect(r.referer ?? '').not.toContain(token);
      }
      // The same URL in a fresh browser: refused.
      const other = await browser!.newContext();
      const p2 = await other.newPage();
      await p2.goto(url);
      await expect.poll(() => p2.locator('#status').textContent()).toContain('used already');
      expect(await p2.locator('#q').isVisible()).toBe(false);
      await other.close();
      await context.close();
    },
    60_000,
  );
});
