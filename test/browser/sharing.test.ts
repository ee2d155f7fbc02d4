/**
 * Sharing in a real browser (headless Chromium, playwright-core): a private site opened by a share
 * link in a fresh browser (the URL is cleaned, revoking ends access at the next request), a password
 * page (wrong, right, rotation logs the visitor out) and logout-all. Skipped where no browser is.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium, noBrowser, whySkipped as why } from '../helpers/browser.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

describe('sharing in a browser', () => {
  let t: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let spaceId: string;
  let siteOrigin: string;

  beforeAll(async () => {
    if (noBrowser) return;
    [t, browser] = await Promise.all([startServer(), launchChromium()]);
    owner = await createUser(t, 'browsershare');
    const s = await createSpace(t, owner.token, { access: 'private' });
    spaceId = s.id;
    await publishViaVersions(
      t,
      spaceId,
      {
        'index.html': '<h1 id="h">Private home</h1>',
        'preview/index.html': '<h1 id="h">Preview for the client</h1>',
        'secret/index.html': '<h1 id="h">Behind the password</h1>',
      },
      { token: owner.token },
    );
    const link = (await api('POST', '/share-links', {})).body.data;
    siteOrigin = new URL(link.url).origin;
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  beforeEach(async () => {
    if (noBrowser) return;
    context = await browser.newContext();
    page = await context.newPage();
  });
  afterEach(async () => {
    if (!noBrowser) await context.close();
  });

  const api = (method: string, path: string, body?: unknown) =>
    t.api(method, `/v1/spaces/${spaceId}${path}`, { token: owner.token, body });
  const heading = async () => (await page.locator('h1').first().textContent())?.trim();

  it.skipIf(noBrowser)(
    `a share link works in a fresh browser, is cleaned, and revoking ends it${why}`,
    async () => {
      const link = (await api('POST', '/share-links', { landing: '/preview/', role: 'viewer' })).body.data;
      expect(link.url).toContain('?__=sl_');
      await page.goto(link.url);
      expect(page.url()).toBe(`${siteOrigin}/preview/`);
      expect(await heading()).toBe('Preview for the client');
      const cookies = await context.cookies();
      expect(cookies.find((c) => c.name === '__Host-spaces-session')).toMatchObject({
        secure: true,
        httpOnly: true,
      });
      await page.goto(`${siteOrigin}/`);
      expect(await heading()).toBe('Private home');
      expect((await api('DELETE', `/share-links/${link.id}`)).status).toBe(204);
      await page.goto(`${siteOrigin}/preview/`);
      expect(await heading()).not.toBe('Preview for the client');
      expect(page.url()).not.toContain(siteOrigin);
    },
  );

  it.skipIf(noBrowser)(
    `the password page: wrong, right, and rotation logs the visitor out${why}`,
    async () => {
      const cred = (
        await api('POST', '/password-credentials', { password: 'open sesame', paths: ['/secret/**'] })
      ).body.data;
      await page.goto(`${siteOrigin}/secret/`);
      expect(await heading()).toBe('Password required');
      await page.fill('input[name=password]', 'wrong one');
      await page.click('button[type=submit]');
      expect(await page.locator('[role=alert]').textContent()).toContain('not right');
      await page.fill('input[name=password]', 'open sesame');
      await page.click('button[type=submit]');
      await page.waitForURL(`${siteOrigin}/secret/`);
      expect(await heading()).toBe('Behind the password');
      expect(
        (await api('POST', `/password-credentials/${cred.id}/rotate`, { password: 'new sesame' })).status,
      ).toBe(200);
      await page.reload();
      expect(await heading()).toBe('Password required');
    },
  );

  it.skipIf(noBrowser)(`logout-all ends the browser's session${why}`, async () => {
    const link = (await api('POST', '/share-links', {})).body.data;
    await page.goto(link.url);
    expect(await heading()).toBe('Private home');
    expect((await api('POST', '/sharing/logout-all')).status).toBe(200);
    await page.goto(`${siteOrigin}/`);
    expect(await heading()).not.toBe('Private home');
  });
});
