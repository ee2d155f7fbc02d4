/**
 * The dashboard's further pages (issue 23) in headless Chromium: variables and secrets (write-only,
 * masked), diagnostics (a bad `_redirects` line with its line number) and operations, team defaults
 * for new spaces, restoring a deleted space, and OAuth apps (create with the secret shown once, delete). axe-core on each.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axe, launchChromium, noBrowser, shot, whySkipped as why } from '../helpers/browser.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, manifestOf, publishViaVersions, putBytes } from '../publishing/helpers.ts';

const PASSWORD = 'correct horse battery';

describe('dashboard pages in the browser', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let user: Awaited<ReturnType<typeof createUser>>;
  let space: any;

  beforeAll(async () => {
    if (noBrowser) return;
    [t, browser] = await Promise.all([startServer(), launchChromium()]);
    origin = t.server.services.config.publicUrl;
    user = await createUser(t, 'dash-pages');
    space = await createSpace(t, user.token, { teamId: user.teamId, title: 'Pages' });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(`${origin}/`);
    await page.fill('#email', user.email);
    await page.fill('#password', PASSWORD);
    await page.click('#signin-form button[type=submit]');
    await page.locator('#who-email').waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it.skipIf(noBrowser)(
    `sets a variable and a secret; the secret is masked and never sent back${why}`,
    async () => {
      await page.goto(`${origin}/#/spaces/${space.id}/variables`);
      await page.locator('#variable-form').waitFor();
      await page.locator('#no-variables').waitFor();
      await page.fill('#var-name', 'API_BASE');
      await page.fill('#var-value', 'https://api.example');
      await page.click('#variable-form button[type=submit]');
      await expect.poll(() => page.locator('#variables').textContent()).toContain('https://api.example');
      await page.fill('#var-name', 'TOKEN');
      await page.check('#var-secret');
      expect(await page.locator('#var-value').getAttribute('type')).toBe('password');
      await page.fill('#var-value', 'hunter2-very-secret');
      await page.click('#variable-form button[type=submit]');
      await expect.poll(() => page.locator('#variables tbody tr').count()).toBe(2);
      const row = page.locator('#variables tbody tr', { hasText: 'TOKEN' });
      expect(await row.textContent()).toContain('secret');
      expect(await page.content()).not.toContain('hunter2-very-secret');
      // The API stored it (a secret's value is never returned).
      const listed = await t.api('GET', `/v1/spaces/${space.id}/variables`, { token: user.token });
      expect(listed.body.data.find((v: any) => v.name === 'TOKEN')).toMatchObject({
        secret: true,
        value: null,
      });
      // A bad name shows the API's problem.
      await page.fill('#var-name', 'not a name!');
      await page.click('#variable-form button[type=submit]');
      await page.locator('#variable-error').waitFor();
      await axe(page, 'variables');
      await shot(page, 'variables');
      // Delete with a confirmation.
      await page.click('#variables tbody tr:has-text("API_BASE") button.danger');
      await page.click('#confirm-ok');
      await expect.poll(() => page.locator('#variables tbody tr').count()).toBe(1);
      const after = await t.api('GET', `/v1/spaces/${space.id}/variables`, { token: user.token });
      expect(after.body.data.map((v: any) => v.name)).toEqual(['TOKEN']);
    },
  );

  it.skipIf(noBrowser)(
    `shows a bad _redirects line with its line number, and the operations${why}`,
    async () => {
      await publishViaVersions(t, space.id, { 'index.html': '<h1>ok</h1>' }, { token: user.token });
      const bad = { 'index.html': 'x', _redirects: '/a /b 301\n/x /y 302 Role=admin\n' };
      const created = await t.api('POST', `/v1/spaces/${space.id}/versions`, {
        token: user.token,
        body: { files: manifestOf(bad) },
      });
      for (const tg of created.body.data.upload.targets) await putBytes(tg.url, (bad as any)[tg.path]);
      const fin = await t.api(
        'POST',
        `/v1/spaces/${space.id}/versions/${created.body.data.version.id}/finalize`,
        {
          token: user.token,
        },
      );
      expect(fin.status).toBeGreaterThanOrEqual(400);
      await page.goto(`${origin}/#/spaces/${space.id}/diagnostics`);
      await page.locator('#diagnostics').waitFor();
      const row = page.locator('#diagnostics tbody tr', { hasText: 'redirect_role_unsupported' });
      expect(await row.textContent()).toContain('_redirects:2');
      expect(await row.locator('.badge').textContent()).toBe('error');
      await axe(page, 'diagnostics');
      await shot(page, 'diagnostics');
      // Delete and restore leave operations behind; the page lists them.
      const other = await createSpace(t, user.token, { teamId: user.teamId, title: 'Ops' });
      expect((await t.api('DELETE', `/v1/spaces/${other.id}`, { token: user.token })).status).toBeLessThan(
        300,
      );
      expect(
        (await t.api('POST', `/v1/spaces/${other.id}/restore`, { token: user.token })).status,
      ).toBeLessThan(300);
      await page.goto(`${origin}/#/spaces/${other.id}/diagnostics`);
      await page.locator('#operations').waitFor();
      expect(await page.locator('#operations tbody tr').count()).toBeGreaterThanOrEqual(2);
      await page.locator('#no-diagnostics').waitFor();
    },
  );

  it.skipIf(noBrowser)(`lists deleted spaces and restores one${why}`, async () => {
    const doomed = await createSpace(t, user.token, { teamId: user.teamId, title: 'Come Back' });
    expect((await t.api('DELETE', `/v1/spaces/${doomed.id}`, { token: user.token })).status).toBe(202);
    await page.goto(`${origin}/#/`);
    await page.locator('#spaces').waitFor();
    expect(await page.locator('#spaces').textContent()).not.toContain('Come Back');
    await page.click('#toggle-deleted');
    await expect.poll(() => page.locator('#spaces tbody tr').count()).toBe(1);
    const row = page.locator('#spaces tbody tr', { hasText: 'Come Back' });
    expect(await row.locator('.badge').textContent()).toBe('Deleted');
    await axe(page, 'deleted spaces');
    await shot(page, 'deleted-spaces');
    await row.locator('button.restore').click();
    await page.locator('#space-title').waitFor();
    expect(await page.locator('#space-title').textContent()).toBe('Come Back');
    const got = await t.api('GET', `/v1/spaces/${doomed.id}`, { token: user.token });
    expect(got.body.data.space.status).toBe('active');
  });

  it.skipIf(noBrowser)(`changes the team's default access; new spaces start with it${why}`, async () => {
    await page.goto(`${origin}/#/team`);
    await page.locator('#team-defaults').waitFor();
    await page.selectOption('#default-access', 'public');
    await page.click('#team-defaults button[type=submit]');
    await page.locator('#defaults-saved').waitFor();
    const team = await t.api('GET', `/v1/teams/${user.teamId}`, { token: user.token });
    expect(team.body.data.defaultAccess).toBe('public');
    const made = await t.api('POST', '/v1/spaces', { token: user.token, body: { teamId: user.teamId } });
    expect(made.body.data.access).toBe('public');
    await axe(page, 'team defaults');
  });

  it.skipIf(noBrowser)(`creates an OAuth app (secret shown once) and deletes it${why}`, async () => {
    await page.goto(`${origin}/#/team`);
    await page.locator('#app-form').waitFor();
    await page.fill('#app-name', 'Deploy bot');
    await page.fill('#app-redirect', 'https://bot.example/callback');
    await page.click('#app-form button[type=submit]');
    await page.locator('#app-secret-value').waitFor();
    const secret = (await page.locator('#app-secret-value').textContent())!;
    expect(secret.length).toBeGreaterThan(20);
    await expect.poll(() => page.locator('#apps tbody tr').count()).toBe(1);
    await axe(page, 'oauth apps');
    await shot(page, 'oauth-apps');
    // Shown once: after a reload only its last characters are listed.
    await page.reload();
    await page.locator('#apps').waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator('#apps').textContent()).toContain(`…${secret.slice(-4)}`);
    await page.click('#apps tbody tr button.danger');
    await page.click('#confirm-ok');
    await page.locator('#no-apps').waitFor();
    const apps = await t.api('GET', `/v1/teams/${user.teamId}/oauth-apps`, { token: user.token });
    expect(apps.body.data).toEqual([]);
  });
});
