/**
 * The dashboard's Sharing and People tabs (issue 25) in headless Chromium against a real server: a
 * grant made (a bad e-mail's problem shown at its field), changed and deleted; a share link made in
 * the page opens the private site in a fresh browser and, revoked in the page, stops at the next
 * request; a machine credential's token is shown once and never again; check access; sign everyone
 * out; a person invited (the mail recorded under SPACES_MAIL=file:<dir>), their role changed, the
 * invitation resent, removed; an access request approved (it becomes a person) and one denied.
 * axe-core on each page; the forms are reached with the keyboard.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axe, launchChromium, noBrowser, shot, whySkipped as why } from '../helpers/browser.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

const PASSWORD = 'correct horse battery';

/** Presses Tab until `selector` has the focus (fails after `max` presses). */
async function tabTo(page: Page, selector: string, max = 150): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`${selector} not reached with Tab`);
}

describe('dashboard sharing and people in the browser', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let mailDir: string;
  let user: Awaited<ReturnType<typeof createUser>>;
  let space: any;
  const complaints: string[] = [];

  beforeAll(async () => {
    if (noBrowser) return;
    mailDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-dash-mail-'));
    [t, browser] = await Promise.all([
      startServer({ env: { SPACES_MAIL: `file:${mailDir}`, SPACES_JOB_POLL_MS: '50' } }),
      launchChromium(),
    ]);
    origin = t.server.services.config.publicUrl;
    user = await createUser(t, 'dash-sharing');
    space = await createSpace(t, user.token, { teamId: user.teamId, title: 'Shared', access: 'private' });
    await publishViaVersions(
      t,
      space.id,
      { 'index.html': '<h1 id="h">Private home</h1>', 'docs/index.html': '<h1>Docs</h1>' },
      { token: user.token },
    );
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('pageerror', (e) => complaints.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      // A refused API call logs its status; anything else (a CSP refusal, a script error) is a fault.
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
    if (mailDir) fs.rmSync(mailDir, { recursive: true, force: true });
  });

  const api = (method: string, p: string, body?: unknown) =>
    t.api(method, `/v1/spaces/${space.id}${p}`, { token: user.token, body });

  /** Every e-mail written under the mail directory, parsed. */
  async function mails(): Promise<{ to: string; text: string }[]> {
    const out: { to: string; text: string }[] = [];
    for (const n of fs.readdirSync(mailDir).filter((f) => f.endsWith('.eml'))) {
      const m = await simpleParser(fs.readFileSync(path.join(mailDir, n)));
      out.push({ to: JSON.stringify(m.to), text: m.text ?? '' });
    }
    return out;
  }
  const mailsTo = async (to: string) => (await mails()).filter((m) => m.to.includes(to));

  it.skipIf(noBrowser)(
    `grants: a bad e-mail shown at its field, then made, changed and deleted${why}`,
    async () => {
      await page.goto(`${origin}/#/spaces/${space.id}/sharing`);
      await page.locator('#no-grants').waitFor();
      expect(await page.locator('#visibility-level').textContent()).toBe('private');
      await axe(page, 'sharing (empty)');

      await page.click('#grant-new');
      await page.selectOption('#grant-audience', 'person');
      await page.fill('#grant-email', 'not an address');
      await page.click('#grant-form button[type=submit]');
      const err = page.locator('#grant-form .field-error');
      await err.waitFor();
      expect(await err.getAttribute('data-pointer')).toMatch(/^\/audience/);
      expect(await page.locator('#grant-email').getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#grant-email').getAttribute('aria-describedby')).toContain(
        'grant-email-error',
      );
      await axe(page, 'sharing (grant error)');

      await page.fill('#grant-email', 'reader@example.test');
      await page.fill('#grant-paths', '/docs/**');
      await page.fill('#grant-max-uses', '5');
      await page.click('#grant-form button[type=submit]');
      const row = page.locator('#grants tr[data-source=grant]');
      await row.waitFor();
      expect(await row.locator('.audience').textContent()).toContain('reader@example.test');
      expect(await row.textContent()).toContain('/docs/**');
      expect(await row.textContent()).toContain('at most 5 uses');
      let listed = (await api('GET', '/grants')).body.data;
      expect(listed).toEqual([
        expect.objectContaining({
          audience: { type: 'person', email: 'reader@example.test' },
          paths: ['/docs/**'],
          role: 'viewer',
          constraints: { maxUses: 5 },
        }),
      ]);

      await row.locator('button.edit').click();
      await page.selectOption('#grant-role', 'commenter');
      await page.click('#grant-form button[type=submit]');
      await expect.poll(() => row.locator('.role').textContent()).toBe('commenter');
      listed = (await api('GET', '/grants')).body.data;
      expect(listed[0]).toMatchObject({
        role: 'commenter',
        paths: ['/docs/**'],
        constraints: { maxUses: 5 },
      });

      await row.locator('button.delete').click();
      await page.click('#confirm-ok');
      await page.locator('#no-grants').waitFor();
      expect((await api('GET', '/grants')).body.data).toEqual([]);
    },
    90_000,
  );

  it.skipIf(noBrowser)(
    `a share link made in the page opens the private site elsewhere; revoked, the next request is refused${why}`,
    async () => {
      await page.goto(`${origin}/#/spaces/${space.id}/sharing`);
      await page.locator('#no-links').waitFor();
      // The form is reached and sent with the keyboard.
      await page.locator('#visibility-h').click();
      await tabTo(page, '#link-name');
      await page.keyboard.type('client preview');
      await page.fill('#link-expires', '2031-01-02T03:04');
      await tabTo(page, '#link-form button[type=submit]');
      await page.keyboard.press('Enter');
      const card = page.locator('.share-link');
      await card.waitFor();
      const url = await card.locator('.link-url').inputValue();
      expect(url).toContain('?__=sl_');
      const [made] = (await api('GET', '/share-links')).body.data;
      expect(made).toMatchObject({ name: 'client preview', role: 'viewer', url });
      expect(new Date(made.constraints.expiresAt).getFullYear()).toBe(2031);
      expect(await card.textContent()).toContain('expires');
      // Copy puts the URL on the clipboard.
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
      await card.locator('button.copy').click();
      await expect.poll(() => card.locator('button.copy').textContent()).toContain('Copied');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);

      const visitor = await browser.newContext();
      try {
        const v = await visitor.newPage();
        await v.goto(url);
        expect((await v.locator('h1').first().textContent())?.trim()).toBe('Private home');
        const siteOrigin = new URL(url).origin;

        await card.locator('button.revoke').click();
        await page.locator('dialog.confirm[open]').waitFor();
        await page.click('#confirm-ok');
        await page.locator('#no-links').waitFor();
        expect((await api('GET', '/share-links')).body.data).toEqual([]);
        await v.goto(`${siteOrigin}/`);
        expect((await v.locator('h1').first().textContent())?.trim()).not.toBe('Private home');
      } finally {
        await visitor.close();
      }
    },
    90_000,
  );

  it.skipIf(noBrowser)(
    `a machine credential's token is shown once; check access names its grant; sign everyone out${why}`,
    async () => {
      await page.goto(`${origin}/#/spaces/${space.id}/sharing`);
      await page.locator('#no-machines').waitFor();
      await page.fill('#machine-name', 'ci');
      await page.click('#machine-form button[type=submit]');
      const secret = page.locator('#machine-secret-value');
      await secret.waitFor();
      const token = await secret.inputValue();
      expect(token).toMatch(/^smc_/);
      await axe(page, 'sharing (secret shown)');
      await page.locator('#machines tr').nth(1).waitFor();
      const [cred] = (await api('GET', '/machine-credentials')).body.data;
      expect(cred).toMatchObject({ name: 'ci', kind: 'machine' });
      expect(JSON.stringify(cred)).not.toContain(token);

      // The token works on the site.
      const link = (await api('POST', '/share-links', {})).body.data;
      const host = new URL(link.url).host;
      await api('DELETE', `/share-links/${link.id}`);
      const served = await request(`${t.url}/`, { headers: { host, 'x-spaces-access-token': token } });
      expect(served.statusCode).toBe(200);
      expect(await served.body.text()).toContain('Private home');

      await page.click('#machine-secret button.link');
      expect(await secret.count()).toBe(0);
      await page.reload();
      await page.locator(`#machines tr[data-credential="${cred.id}"]`).waitFor();
      expect(await page.locator('#machine-secret').count()).toBe(0);
      expect(await page.content()).not.toContain(token);

      // Check access: nobody gets in anonymously; the machine credential does, by its grant.
      await page.fill('#check-url', '/docs/');
      await page.click('#check-form button[type=submit]');
      await expect.poll(() => page.locator('#check-answer').getAttribute('data-allowed')).toBe('false');
      await page.selectOption('#check-kind', 'credential');
      await page.fill('#check-credential', `machine:${cred.id}`);
      await page.click('#check-form button[type=submit]');
      await expect.poll(() => page.locator('#check-answer').getAttribute('data-allowed')).toBe('true');
      expect(await page.locator('#check-via').textContent()).toContain(cred.grantId);
      await axe(page, 'sharing');
      await shot(page, 'sharing');

      // Revoked in the page: the token stops.
      await page.locator(`#machines tr[data-credential="${cred.id}"] button.revoke`).click();
      await page.click('#confirm-ok');
      await page.locator('#no-machines').waitFor();
      const refused = await request(`${t.url}/`, { headers: { host, 'x-spaces-access-token': token } });
      expect(refused.statusCode).not.toBe(200);
      await refused.body.text();

      // Sign everyone out: asks first, then ends the sessions of a share-link visitor.
      const again = (await api('POST', '/share-links', {})).body.data;
      const visitor = await browser.newContext();
      try {
        const v = await visitor.newPage();
        await v.goto(again.url);
        expect((await v.locator('h1').first().textContent())?.trim()).toBe('Private home');
        await page.click('#logout-all');
        await page.locator('dialog.confirm[open]').waitFor();
        await page.click('#confirm-ok');
        await page.locator('#logout-all-done').waitFor();
        await v.goto(`${new URL(again.url).origin}/`);
        expect((await v.locator('h1').first().textContent())?.trim()).not.toBe('Private home');
      } finally {
        await visitor.close();
      }
    },
    90_000,
  );

  it.skipIf(noBrowser)(
    `passwords: set, changed after a warning, removed${why}`,
    async () => {
      await page.goto(`${origin}/#/spaces/${space.id}/sharing`);
      await page.locator('#no-passwords').waitFor();
      await page.fill('#password-value', 'short');
      await page.click('#password-form button[type=submit]');
      await page.locator('#password-value-error').waitFor();
      expect(await page.locator('#password-value').getAttribute('aria-invalid')).toBe('true');
      await page.fill('#password-value', 'open sesame');
      await page.click('#password-form button[type=submit]');
      const row = page.locator('#passwords tbody tr');
      await row.waitFor();
      await row.locator('button.rotate').click();
      await page.locator('dialog.confirm[open] #rotate-warning').waitFor();
      expect(await page.locator('#rotate-warning').textContent()).toContain('signed out');
      await page.fill('#rotate-password', 'new sesame!');
      await page.click('#confirm-ok');
      await page.locator('dialog.confirm[open]').waitFor({ state: 'detached' });
      const [cred] = (await api('GET', '/password-credentials')).body.data;
      expect(cred.updatedAt > cred.createdAt).toBe(true);
      await row.locator('button.revoke').click();
      await page.click('#confirm-ok');
      await page.locator('#no-passwords').waitFor();
      expect((await api('GET', '/password-credentials')).body.data).toEqual([]);
    },
    60_000,
  );

  it.skipIf(noBrowser)(
    `people: invite (mail recorded), change role, resend, remove; approve and deny requests${why}`,
    async () => {
      await page.goto(`${origin}/#/spaces/${space.id}/people`);
      await page.locator('#no-people').waitFor();
      await page.locator('#no-requests').waitFor();
      await axe(page, 'people (empty)');

      const email = 'guest@example.test';
      await page.locator('#invite-h').click();
      await tabTo(page, '#invite-email');
      await page.keyboard.type(email);
      await page.fill('#invite-paths', '/docs/**');
      await tabTo(page, '#invite-form button[type=submit]');
      await page.keyboard.press('Enter');
      await page.locator('#invited').waitFor();
      const row = page.locator(`#people tr[data-person="${email}"]`);
      await row.waitFor();
      expect(await row.locator('.person-status').textContent()).toBe('invited');
      await expect.poll(async () => (await mailsTo(email)).length, { timeout: 15_000 }).toBe(1);
      expect((await mailsTo(email))[0]!.text).toMatch(/\/__service\/person\?token=sppl_/);

      await row.locator('select.person-role').selectOption('commenter');
      await expect
        .poll(async () => (await api('GET', '/people')).body.data[0].grants)
        .toEqual([expect.objectContaining({ role: 'commenter', paths: ['/docs/**'] })]);

      await row.locator('button.resend').click();
      await expect.poll(async () => (await mailsTo(email)).length, { timeout: 15_000 }).toBe(2);

      // Two visitors ask for access (confirmed by mail): one approved, one denied.
      const host = new URL((await api('POST', '/share-links', {})).body.data.url).hostname;
      for (const asker of ['asker@example.test', 'nope@example.test']) {
        const r = await request(`${t.url}/v1/access/request`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ host, email: asker, message: 'please', return: '/docs/' }).toString(),
        });
        expect(r.statusCode).toBe(200);
        await r.body.text();
        let confirm: string | undefined;
        await expect
          .poll(
            async () => {
              confirm = (await mailsTo(asker))
                .map(
                  (m) =>
                    /(http:\/\/\S+\/v1\/access\/request\/confirm\?token=sprq_[A-Za-z0-9_-]+)/.exec(
                      m.text,
                    )?.[1],
                )
                .find(Boolean);
              return !!confirm;
            },
            { timeout: 15_000 },
          )
          .toBe(true);
        const u = new URL(confirm!);
        const ok = await request(`${t.url}${u.pathname}${u.search}`);
        expect(ok.statusCode).toBe(200);
        await ok.body.text();
      }
      await page.reload();
      const asked = page.locator('.access-request[data-request="asker@example.test"]');
      await asked.waitFor();
      expect(await asked.textContent()).toContain('/docs/');
      await axe(page, 'people');
      await shot(page, 'people');
      await asked.locator('select.request-role').selectOption('commenter');
      await asked.locator('button.approve').click();
      await asked.waitFor({ state: 'detached' });
      await page.locator('#people tr[data-person="asker@example.test"]').waitFor();
      const approved = (await api('GET', '/people')).body.data.find(
        (p: any) => p.email === 'asker@example.test',
      );
      expect(approved.grants).toEqual([expect.objectContaining({ role: 'commenter', paths: ['/**'] })]);
      // The approval mailed the requester their sign-in link.
      await expect
        .poll(
          async () =>
            (await mailsTo('asker@example.test')).some((m) => /__service\/person\?token=sppl_/.test(m.text)),
          { timeout: 15_000 },
        )
        .toBe(true);
      await page.locator('.access-request[data-request="nope@example.test"] button.deny').click();
      await page.locator('#no-requests').waitFor();
      const all = (await api('GET', '/requests')).body.data;
      expect(Object.fromEntries(all.map((r: any) => [r.email, r.status]))).toEqual({
        'asker@example.test': 'approved',
        'nope@example.test': 'denied',
      });

      await row.locator('button.remove').click();
      await page.click('#confirm-ok');
      await row.waitFor({ state: 'detached' });
      const people = (await api('GET', '/people')).body.data.map((p: any) => p.email);
      expect(people).toEqual(['asker@example.test']);
    },
    120_000,
  );
});
