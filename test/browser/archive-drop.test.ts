/**
 * Publishing an archive from the browser (issue 23): a .tar.gz or .zip dropped on the publish panel
 * goes to `POST /v1/publish` as its `archive` part, with upload progress, and becomes the live site.
 * Headless Debian Chromium; skipped with the reason where it is not installed.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { axe, launchChromium, noBrowser, shot, whySkipped as why } from '../helpers/browser.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, tarGzOf } from '../publishing/helpers.ts';

const PASSWORD = 'correct horse battery';

function zipOf(files: Record<string, string>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, body] of Object.entries(files)) zip.addBuffer(Buffer.from(body), name);
  zip.end();
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => parts.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(parts)));
    zip.outputStream.on('error', reject);
  });
}

/** Drops one file on the publish panel's drop zone, as a person dragging it from the desktop. */
async function dropFile(page: Page, name: string, bytes: Buffer): Promise<void> {
  await page.evaluate(
    ({ name, b64 }) => {
      const raw = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([raw], name));
      const zone = document.querySelector('.dropzone')!;
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    { name, b64: bytes.toString('base64') },
  );
}

describe('archive drop in the browser', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let space: any;

  const siteText = async (p = '/') =>
    (await t.api('GET', p, { token: null, host: new URL(space.liveUrl).host })).text;

  beforeAll(async () => {
    if (noBrowser) return;
    [t, browser] = await Promise.all([startServer(), launchChromium()]);
    origin = t.server.services.config.publicUrl;
    const user = await createUser(t, 'archive-drop');
    space = await createSpace(t, user.token, {
      teamId: user.teamId,
      title: 'Archive Drop',
      access: 'public',
    });
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

  /** Every progress line the panel showed, recorded as the DOM changes. */
  const watchProgress = () =>
    page.evaluate(() => {
      const seen: string[] = [];
      (window as any).__progress = seen;
      new MutationObserver(() => {
        const label = document.querySelector('.progress label')?.textContent;
        if (label && seen.at(-1) !== label) seen.push(label);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });

  it.skipIf(noBrowser)(`publishes a dropped .tar.gz with progress; the site serves it${why}`, async () => {
    await page.goto(`${origin}/#/spaces/${space.id}/publish`);
    await page.locator('.dropzone').waitFor();
    // A small archive goes up in one progress event over loopback: the test reads the labels shown.
    const archive = await tarGzOf({
      'index.html': '<!doctype html><title>a</title><h1>From the tar.gz</h1>',
      'docs/readme.txt': 'inside a folder',
    });
    await dropFile(page, 'site.tar.gz', archive);
    await expect.poll(() => page.locator('#picked').textContent()).toContain('Archive site.tar.gz');
    expect(await page.locator('#publish').textContent()).toContain('the archive');
    await axe(page, 'publish an archive');
    await shot(page, 'publish-archive');
    await watchProgress();
    await page.click('#publish');
    await page.locator('#receipt').waitFor();
    expect(await page.locator('#receipt h3').textContent()).toBe('Published v1');
    expect(await page.locator('#receipt').textContent()).toContain('2 files from site.tar.gz');
    const seen: string[] = await page.evaluate(() => (window as any).__progress);
    expect(
      seen.some((l) => /^(Uploading|Finalizing): .*of/.test(l)),
      JSON.stringify(seen),
    ).toBe(true);
    expect(await siteText()).toContain('From the tar.gz');
    expect(await siteText('/docs/readme.txt')).toBe('inside a folder');
  });

  it.skipIf(noBrowser)(
    `publishes a dropped .zip over it, and shows the server's problem for a bad one${why}`,
    async () => {
      await page.goto(`${origin}/#/spaces/${space.id}/publish`);
      await page.locator('.dropzone').waitFor();
      await dropFile(page, 'broken.zip', Buffer.from('this is not a zip archive at all'));
      await expect.poll(() => page.locator('#picked').textContent()).toContain('Archive broken.zip');
      await page.click('#publish');
      await page.locator('#publish-error').waitFor();
      expect(await page.locator('#publish-error').textContent()).toMatch(/zip|archive/i);
      expect(await page.locator('#receipt').count()).toBe(0);

      await dropFile(page, 'site.zip', await zipOf({ 'index.html': '<h1>From the zip</h1>' }));
      await expect.poll(() => page.locator('#picked').textContent()).toContain('Archive site.zip');
      await page.click('#publish');
      await page.locator('#receipt').waitFor();
      expect(await page.locator('#receipt h3').textContent()).toBe('Published v2');
      expect(await siteText()).toContain('From the zip');
    },
  );
});
