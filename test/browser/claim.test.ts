/**
 * The claim page in a real browser: headless Chromium from Debian (`/usr/bin/chromium`, installed by
 * `.ci/system-deps`), driven by playwright-core. Skipped where the browser is not installed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium, noBrowser, whySkipped as why } from '../helpers/browser.ts';
import { createUser, expectProblem, startServer, type TestServer } from '../helpers/server.ts';

/** Said in the test names when skipped, so the reason shows in the report. */
const PASSWORD = 'correct horse battery';

describe('claim page in a browser', () => {
  let t: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let shots: string;
  /** The API host: the server routes any other Host name to the site edge. */
  let origin: string;

  beforeAll(async () => {
    if (noBrowser) return;
    shots = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-browser-'));
    [t, browser] = await Promise.all([startServer(), launchChromium()]);
    origin = `http://127.0.0.1:${t.port}`;
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    // Keep the screenshot folder only when a test failed and left one there.
    if (shots && fs.readdirSync(shots).length === 0) fs.rmdirSync(shots);
  });

  beforeEach(async () => {
    if (noBrowser) return;
    context = await browser.newContext({ viewport: { width: 900, height: 1000 } });
    page = await context.newPage();
  });

  afterEach(async (ctx) => {
    if (noBrowser) return;
    if (ctx.task.result?.state === 'fail') {
      const file = path.join(shots, `${ctx.task.name.replace(/\W+/g, '-')}.png`);
      await page.screenshot({ path: file, fullPage: true }).catch(() => {});
      console.error(`claim page screenshot: ${file}`);
    }
    await context.close();
  });

  it.skipIf(noBrowser)(
    `opens the claim link, signs in, picks a team, claims, and the space is in the account${why}`,
    async () => {
      const user = await createUser(t, 'browser');
      // A second team the user belongs to, so picking one in the select matters.
      const team = await t.api('POST', '/v1/teams', { token: user.token, body: { name: 'Browser Crew' } });
      expect(team.status).toBe(201);
      const teamId: string = team.body.data.id;
      expect(teamId).not.toBe(user.teamId);

      const { space, key } = await t.server.services.anonymous.createSpace('203.0.113.50', {
        title: 'Browser Claim',
      });
      expect(key).toMatch(/^sfc_/);

      const visits: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/v1/claim/visit')) visits.push(r.headers().authorization ?? '');
      });

      const res = await page.goto(`${origin}/claim#${key}`);
      expect(res?.status()).toBe(200);
      // The space is shown, with its time left.
      await expect.poll(() => page.locator('#space').isVisible()).toBe(true);
      expect(await page.locator('#space-title').textContent()).toBe('Browser Claim');
      expect(await page.locator('#time-left').textContent()).toMatch(
        /^Time left to claim: (\d+ h )?\d+ min\.$/,
      );
      expect(await page.locator('#space-url').getAttribute('href')).toBe(
        t.server.services.spaces.liveUrlOf(space),
      );
      // The key left the address bar, but the page used it.
      expect(page.url()).toBe(`${origin}/claim`);
      expect(await page.evaluate(() => location.href)).not.toContain(key);
      expect(visits).toEqual([`Bearer ${key}`]);
      expect(await page.locator('#choose').isVisible()).toBe(false);

      // A wrong password is refused on the page.
      await page.fill('#email', user.email);
      await page.fill('#password', 'not the password');
      await page.click('#signin-form button[type=submit]');
      await expect.poll(() => page.locator('#signin-error').isVisible()).toBe(true);
      expect(await page.locator('#signin-error').textContent()).toMatch(/password is wrong/);
      expect(await page.locator('#choose').isVisible()).toBe(false);

      // Sign in; the teams appear.
      await page.fill('#password', PASSWORD);
      await page.click('#signin-form button[type=submit]');
      await expect.poll(() => page.locator('#choose').isVisible()).toBe(true);
      expect(await page.locator('#signin').isVisible()).toBe(false);
      const options = await page
        .locator('#team option')
        .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
      expect(options.sort()).toEqual([user.teamId, teamId].sort());

      // Pick the second team and claim.
      await page.selectOption('#team', teamId);
      await page.click('#claim-form button[type=submit]');
      await expect.poll(() => page.locator('#done').isVisible()).toBe(true);
      expect(await page.locator('#claim-error').isVisible()).toBe(false);
      expect(await page.locator('#time-left').textContent()).toBe('Claimed: it no longer expires.');
      expect(await page.locator('#done-team').textContent()).toContain('Browser Crew');
      expect(await page.locator('#done-url').getAttribute('href')).toBe(
        t.server.services.spaces.liveUrlOf(space),
      );

      // Over the API: the space is in the account, in the chosen team, no longer anonymous.
      const mine = await t.api('GET', '/v1/spaces', { token: user.token });
      expect(mine.status).toBe(200);
      const got = mine.body.data.find((s: { id: string }) => s.id === space.id);
      expect(got).toMatchObject({ id: space.id, title: 'Browser Claim', anonymous: false, teamId });
      // And the key no longer works.
      expectProblem(await t.api('POST', '/v1/claim/visit', { token: key }), 409, 'space_already_claimed');
    },
  );

  it.skipIf(noBrowser)(`shows an error for a missing or unknown key${why}`, async () => {
    await page.goto(`${origin}/claim#not-a-key`);
    await expect.poll(() => page.locator('#space-error').isVisible()).toBe(true);
    expect(await page.locator('#space-error').textContent()).toBe(
      'This link has no space key. Open the claim link you were given.',
    );
    expect(await page.locator('#space').isVisible()).toBe(false);
    expect(await page.locator('#signin').isVisible()).toBe(false);
    expect(page.url()).toBe(`${origin}/claim`);

    // Well-formed but unknown: the API's refusal is shown, and nothing else. (Leave the page first:
    // going from /claim to /claim#… would only change the fragment, not load the page again.)
    await page.goto('about:blank');
    await page.goto(`${origin}/claim#sfc_${'0'.repeat(43)}`);
    await expect.poll(() => page.locator('#space-error').isVisible()).toBe(true);
    expect(await page.locator('#space-error').textContent()).not.toBe('');
    expect(await page.locator('#loading').isVisible()).toBe(false);
    expect(await page.locator('#signin').isVisible()).toBe(false);
    expect(await page.locator('#choose').isVisible()).toBe(false);
  });
});
