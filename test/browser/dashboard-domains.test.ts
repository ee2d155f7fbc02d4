/**
 * The dashboard's custom domains page (issue 23 with #21) in headless Chromium, against a real DNS
 * server the test runs: list, add (a bad hostname's problem shown at the field), the records to
 * create, verify now, what is missing, the certificate, remove with a confirmation; the team's
 * wildcard setting; and OAuth apps edited and their secret rotated. axe-core on each page.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axe, launchChromium, noBrowser, shot, whySkipped as why } from '../helpers/browser.ts';
import { startDns, type TestDns } from '../helpers/dns-server.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace } from '../publishing/helpers.ts';

const PASSWORD = 'correct horse battery';

describe('dashboard domains and OAuth apps in the browser', () => {
  let t: TestServer;
  let dns: TestDns;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let user: Awaited<ReturnType<typeof createUser>>;
  let space: any;

  beforeAll(async () => {
    if (noBrowser) return;
    dns = await startDns();
    [t, browser] = await Promise.all([
      startServer({ env: { SPACES_DNS_SERVERS: dns.address, SPACES_BASE_DOMAIN: 'spaces.example.test' } }),
      launchChromium(),
    ]);
    origin = t.server.services.config.publicUrl;
    user = await createUser(t, 'dash-domains');
    space = await createSpace(t, user.token, { teamId: user.teamId, title: 'Domained' });
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
    await dns?.close();
  });

  it.skipIf(noBrowser)(
    `adds a domain, shows its records, verifies it, says what is missing, removes it${why}`,
    async () => {
      await page.goto(`${origin}/#/spaces/${space.id}/domains`);
      await page.locator('#no-domains').waitFor();
      await axe(page, 'domains (none)');
      // A bad hostname: the API's problem at the field it points at.
      await page.fill('#domain-host', 'https://www.example.test/');
      await page.click('#domain-form button[type=submit]');
      await page.locator('#domain-error').waitFor();
      expect(await page.locator('#domain-error .problem-pointer').textContent()).toContain('/hostname');
      expect(await page.locator('#domain-host').getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#domain-host').getAttribute('aria-describedby')).toContain('domain-error');
      await axe(page, 'domains (error)');

      await page.fill('#domain-host', 'WWW.Example.test');
      await page.click('#domain-form button[type=submit]');
      const card = page.locator('article.domain[data-domain="www.example.test"]');
      await card.waitFor();
      expect(await page.locator('#domain-error').count()).toBe(0);
      expect(await card.locator('.domain-status').textContent()).toBe('Waiting for DNS');
      const txt = card.locator('tr[data-purpose=ownership]');
      expect(await txt.textContent()).toContain('_spaces-challenge.www.example.test');
      const token = (await txt.locator('.record-value').textContent())!;
      expect(token).toMatch(/^spaces-verify=/);
      const routing = (await card.locator('tr[data-purpose=routing] .record-value').textContent())!;
      expect(routing).toMatch(/\.spaces\.example\.test$/);

      // Not in DNS yet: verify now says so.
      await card.locator('button.verify').click();
      await expect.poll(() => txt.locator('.record-state').textContent()).toBe('missing');
      await card.locator('button.diagnose').click();
      await card.locator('.diagnosis').waitFor();
      expect(await card.locator('.serving').textContent()).toBe('Waiting for DNS');
      expect(await card.locator('.domain-problems li').count()).toBeGreaterThan(0);

      // The records the page listed, created: verified, both records ok.
      dns.set('_spaces-challenge.www.example.test', 'TXT', [token]);
      dns.set('www.example.test', 'CNAME', [routing]);
      await card.locator('button.verify').click();
      await expect.poll(() => card.locator('.domain-status').textContent()).toBe('Verified');
      expect(await card.locator('.record-state').allTextContents()).toEqual(['ok', 'ok']);
      expect(await card.locator('.certificate').textContent()).toContain('Certificate');
      await card.locator('button.diagnose').click();
      await expect.poll(() => card.locator('.serving').textContent()).not.toBe('Waiting for DNS');
      await axe(page, 'domains');
      await page.evaluate(() => window.scrollTo(0, 0));
      await shot(page, 'domains');
      const listed = await t.api('GET', `/v1/spaces/${space.id}/domains`, { token: user.token });
      expect(listed.body.data).toHaveLength(1);
      expect(listed.body.data[0]).toMatchObject({ hostname: 'www.example.test', status: 'verified' });

      // Remove asks first; Cancel keeps it, Remove unbinds and deletes it.
      await card.locator('button.remove').click();
      await page.locator('dialog.confirm[open]').waitFor();
      await page.click('dialog.confirm[open] button:has-text("Cancel")');
      expect(await card.count()).toBe(1);
      await card.locator('button.remove').click();
      await page.click('#confirm-ok');
      await page.locator('#no-domains').waitFor();
      const all = await t.api('GET', `/v1/domains?team=${user.teamId}`, { token: user.token });
      expect(all.body.data).toEqual([]);
    },
    90_000,
  );

  it.skipIf(noBrowser)(`turns wildcard domains on for the team${why}`, async () => {
    await page.goto(`${origin}/#/team`);
    await page.locator('#team-domain-settings').waitFor();
    expect(await page.locator('#wildcard-enabled').isChecked()).toBe(false);
    await page.check('#wildcard-enabled');
    await expect
      .poll(async () => {
        const r = await t.api('GET', `/v1/teams/${user.teamId}/domain-settings`, { token: user.token });
        return r.body.data.wildcardEnabled;
      })
      .toBe(true);
    await expect.poll(() => page.locator('#wildcard-enabled:not([disabled])').isChecked()).toBe(true);
    await axe(page, 'team (domain settings)');
    // Now the team may add a wildcard from the space's page.
    await page.goto(`${origin}/#/spaces/${space.id}/domains`);
    await page.fill('#domain-host', '*.example.test');
    await page.click('#domain-form button[type=submit]');
    await page.locator('article.domain[data-domain="*.example.test"]').waitFor();
  });

  it.skipIf(noBrowser)(`edits an OAuth app and rotates its secret (shown once)${why}`, async () => {
    const made = await t.api('POST', `/v1/teams/${user.teamId}/oauth-apps`, {
      token: user.token,
      body: {
        name: 'Deploy bot',
        type: 'confidential',
        scopes: ['spaces:read'],
        redirectUris: ['https://bot.example/callback'],
      },
    });
    expect(made.status, made.text).toBe(201);
    const first = made.body.data;
    await page.goto(`${origin}/#/team`);
    await page.locator('#apps').waitFor();
    await page.click('#apps tbody tr button.edit');
    await page.locator('#app-edit-form').waitFor();
    // Focus moves into the form once it has rendered (an effect): wait for it under load.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('app-edit-name');
    // No redirect URI at all: the API's problem, at its field.
    await page.fill('#app-edit-uris', '');
    await page.click('#app-edit-form button[type=submit]');
    await page.locator('#app-edit-error').waitFor();
    expect(await page.locator('#app-edit-error .problem-pointer').textContent()).toContain('/redirectUris');
    await page.fill('#app-edit-name', 'Deploy robot');
    await page.fill('#app-edit-uris', 'https://bot.example/callback\nhttps://bot.example/other');
    await page.check('#app-edit-form label:has-text("spaces:publish") input');
    await axe(page, 'oauth app edit');
    await shot(page, 'oauth-app-edit');
    await page.click('#app-edit-form button[type=submit]');
    await page.locator('#app-edit-form').waitFor({ state: 'detached' });
    const got = await t.api('GET', `/v1/teams/${user.teamId}/oauth-apps/${first.id}`, { token: user.token });
    expect(got.body.data).toMatchObject({
      name: 'Deploy robot',
      redirectUris: ['https://bot.example/callback', 'https://bot.example/other'],
    });
    expect([...got.body.data.scopes].sort()).toEqual(['spaces:publish', 'spaces:read']);
    // The list reloads after the form closes: wait for it, then read it.
    await page
      .locator('#apps', { hasText: 'Deploy robot' })
      .waitFor({ timeout: 5000 })
      .catch(() => {});
    expect(await page.locator('#apps').textContent()).toContain('Deploy robot');

    // Rotate: confirmed, the new secret shown once, the list's hint follows it.
    await page.click('#apps tbody tr button.rotate');
    await page.click('#confirm-ok');
    await page.locator('#app-secret-value').waitFor();
    const secret = (await page.locator('#app-secret-value').textContent())!;
    expect(secret).not.toBe(first.clientSecret);
    await expect.poll(() => page.locator('#apps').textContent()).toContain(`…${secret.slice(-4)}`);
    await axe(page, 'oauth app rotated');
    // The old secret no longer authenticates the client; the new one does.
    const tokenWith = (s: string) =>
      t.api('POST', '/v1/auth/oauth2/token', {
        token: null,
        body: { grant_type: 'client_credentials', client_id: first.clientId, client_secret: s },
      });
    const [oldTry, newTry] = [await tokenWith(first.clientSecret), await tokenWith(secret)];
    expect(oldTry.status).toBe(401);
    expect(newTry.status).not.toBe(401);
    await page.reload();
    await page.locator('#apps').waitFor();
    expect(await page.content()).not.toContain(secret);
  });
});
