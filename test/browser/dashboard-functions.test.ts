/**
 * The dashboard's Functions tab in headless Chromium against a real server with real workerd: the
 * live version's code (entry, routes), its crons (Run now records the run), its database (tables,
 * the SQL console opened in a new tab), stored objects and the latest runtime log lines; a static
 * space says it runs no code. axe-core on the page.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axe, launchChromium, noBrowser, whySkipped as why } from '../helpers/browser.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

const PASSWORD = 'correct horse battery';
const HANDLER = `export default { async fetch(req, env) {
  const url = new URL(req.url);
  if (url.pathname === '/api/digest') { console.log('digest ran'); return new Response('ok'); }
  await env.DB.exec('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT)');
  await env.DB.prepare('INSERT INTO notes (body) VALUES (?)').bind('hello').run();
  return new Response('stored');
} };`;

describe('dashboard functions tab in the browser', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let space: any;
  let plain: any;
  const complaints: string[] = [];

  beforeAll(async () => {
    if (noBrowser) return;
    [t, browser] = await Promise.all([startServer(), launchChromium()]);
    origin = t.server.services.config.publicUrl;
    const user = await createUser(t, 'dash-functions');
    space = await createSpace(t, user.token, { teamId: user.teamId, title: 'Coded', access: 'public' });
    await publishViaVersions(
      t,
      space.id,
      {
        'index.html': 'home',
        'handler.js': HANDLER,
        'spaces.json': JSON.stringify({
          runtime: { kind: 'functions' },
          crons: [{ path: '/api/digest', schedule: 'daily' }],
        }),
      },
      { token: user.token },
    );
    const hit = await t.api('GET', '/api/write', { token: null, host: `${space.slug}.localhost` });
    expect(hit.text).toBe('stored');
    plain = await createSpace(t, user.token, { teamId: user.teamId, title: 'Static', access: 'public' });
    await publishViaVersions(t, plain.id, { 'index.html': 'static' }, { token: user.token });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('pageerror', (e) => complaints.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) complaints.push(m.text());
    });
    await page.goto(`${origin}/`);
    await page.fill('#email', user.email);
    await page.fill('#password', PASSWORD);
    await page.click('#signin-form button[type=submit]');
    await page.locator('#who-email').waitFor();
  }, 60_000);

  afterAll(async () => {
    if (!noBrowser) expect(complaints, 'console errors in the dashboard').toEqual([]);
    await browser?.close();
    await t?.close();
  });

  it.skipIf(noBrowser)(
    `shows the code, runs a cron, lists the tables and opens the console${why}`,
    async () => {
      await page.goto(`${origin}/#/spaces/${space.id}/functions`);
      await page.locator('#runtime').waitFor({ timeout: 15_000 });
      expect(await page.locator('#runtime').textContent()).toContain('handler.js');
      await page.locator('#crons').waitFor();
      expect(await page.locator('#crons').textContent()).toContain('/api/digest');
      await page.locator('#db-tables').waitFor();
      expect(await page.locator('#db-tables').textContent()).toMatch(/notes\s*1/);
      await axe(page, 'functions');
      await page.click('#crons button');
      await expect
        .poll(async () => (await page.locator('#crons').textContent()) ?? '', { timeout: 10_000 })
        .toContain('200');
      const popup = page.waitForEvent('popup');
      await page.click('#open-console');
      const consolePage = await popup;
      await consolePage.locator('#q').waitFor({ state: 'visible', timeout: 10_000 });
      expect(consolePage.url()).toBe(`${origin}/v1/db-console`);
      await consolePage.close();
      // The digest's console line reaches the runtime log; the tab lists it after a reload.
      await expect
        .poll(
          async () => {
            await page.reload();
            await page.locator('#runtime').waitFor();
            return (
              (await page
                .locator('#runtime-logs')
                .textContent()
                .catch(() => '')) ?? ''
            );
          },
          { timeout: 15_000, interval: 500 },
        )
        .toContain('digest ran');
    },
    60_000,
  );

  it.skipIf(noBrowser)(`says a static space runs no code${why}`, async () => {
    await page.goto(`${origin}/#/spaces/${plain.id}/functions`);
    await page.locator('#no-runtime').waitFor({ timeout: 15_000 });
    expect(await page.locator('#no-runtime').textContent()).toContain('runs no code');
  });
});
