import fs from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser, describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/**
 * An invited person on the site itself (behaviour §3.4): with no account, the mailed link signs them
 * in to that space only, and they reach exactly the granted paths — everything else of the private
 * site looks like no site at all, as it does before the link, on another space, and after removal.
 */
interface Hit {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describeEachDb('people on the site', (db) => {
  let t: TestServer;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let space: { id: string; slug: string };
  let other: { id: string; slug: string };
  const hostOf = (slug: string) => `${slug}.localhost`;

  beforeAll(async () => {
    t = await startServer({ db, env: { SPACES_JOB_POLL_MS: '50' } });
    owner = await createUser(t, 'people-site');
    space = await createSpace(t, owner.token, { access: 'private' });
    other = await createSpace(t, owner.token, { access: 'private' });
    const files = { 'index.html': '<h1>home</h1>', 'docs/a.html': 'docs a', 'secret.html': 'secret' };
    await publishViaVersions(t, space.id, files, { token: owner.token });
    await publishViaVersions(t, other.id, files, { token: owner.token });
  });
  afterAll(() => t?.close());

  const site = async (host: string, p: string, cookie?: string): Promise<Hit> => {
    const r = await request(`${t.url}${p}`, { headers: { host, ...(cookie ? { cookie } : {}) } });
    return { status: r.statusCode, headers: r.headers as Hit['headers'], body: await r.body.text() };
  };
  const cookieOf = (h: Hit) => String([h.headers['set-cookie']].flat()[0]).split(';')[0]!;

  /** The link in the invitation e-mail the default sender wrote under <data dir>/mail. */
  async function mailedLink(to: string): Promise<string> {
    const dir = path.join(t.dataDir, 'mail');
    const end = Date.now() + 15_000;
    for (;;) {
      for (const n of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
        const mail = await simpleParser(fs.readFileSync(path.join(dir, n)));
        const text = mail.text ?? '';
        if (!mail.to || !JSON.stringify(mail.to).includes(to)) continue;
        const m = /(http:\/\/\S+\/__service\/person\?token=sppl_[A-Za-z0-9_-]+)/.exec(text);
        if (m) return m[1]!;
      }
      if (Date.now() > end) throw new Error('no invitation e-mail');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('the link signs a person in to that space only, for exactly the granted paths, until removed', async () => {
    const email = `reader-${db}@example.test`;
    const made = await t.api('POST', `/v1/spaces/${space.id}/people`, {
      token: owner.token,
      body: { email, paths: ['/docs/**'] },
    });
    expect(made.status, made.text).toBe(201);
    const link = new URL(await mailedLink(email));
    expect(link.hostname).toBe(hostOf(space.slug));
    const unseen = await site(hostOf(space.slug), '/docs/a');
    expect(unseen.status).toBe(302);

    // On another space's host the link opens nothing (and looks like nothing is there).
    const elsewhere = await site(hostOf(other.slug), `${link.pathname}${link.search}`);
    expect(elsewhere.status).toBe(unseen.status);
    expect(elsewhere.headers['set-cookie']).toBeUndefined();

    const signed = await site(hostOf(space.slug), `${link.pathname}${link.search}`);
    expect(signed.status).toBe(303);
    expect(signed.headers.location).toBe('/');
    expect(String(signed.headers['set-cookie'])).toMatch(/HttpOnly/i);
    const cookie = cookieOf(signed);

    const docs = await site(hostOf(space.slug), '/docs/a', cookie);
    expect(docs.status).toBe(200);
    expect(docs.body).toBe('docs a');
    expect(String(docs.headers['cache-control'])).toContain('private');
    for (const p of ['/', '/secret']) {
      const r = await site(hostOf(space.slug), p, cookie);
      expect(r.status, p).toBe(unseen.status);
    }
    // The cookie is this host's: the other space does not honour it.
    expect((await site(hostOf(other.slug), '/docs/a', cookie)).status).toBe(302);
    // The person is active now.
    const listed = await t.api('GET', `/v1/spaces/${space.id}/people`, { token: owner.token });
    expect(listed.body.data[0]).toMatchObject({ email, status: 'active' });

    // Removed: the next request is refused, and the link no longer signs in.
    expect(
      (await t.api('DELETE', `/v1/spaces/${space.id}/people/${made.body.data.id}`, { token: owner.token }))
        .status,
    ).toBe(204);
    expect((await site(hostOf(space.slug), '/docs/a', cookie)).status).toBe(unseen.status);
    expect((await site(hostOf(space.slug), `${link.pathname}${link.search}`)).status).toBe(unseen.status);
  });

  it('a wrong or missing token opens nothing', async () => {
    const base = (await site(hostOf(space.slug), '/')).status;
    for (const q of ['', '?token=', '?token=sppl_nope', '?token=smc_x']) {
      const r = await site(hostOf(space.slug), `/__service/person${q}`);
      expect(r.status, q).toBe(base);
      expect(r.headers['set-cookie'], q).toBeUndefined();
    }
  });

  /** Every e-mail the default sender wrote, parsed. */
  async function mails(): Promise<{ to: string; text: string }[]> {
    const dir = path.join(t.dataDir, 'mail');
    const out: { to: string; text: string }[] = [];
    for (const n of fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.eml')) : []) {
      const m = await simpleParser(fs.readFileSync(path.join(dir, n)));
      out.push({ to: JSON.stringify(m.to), text: m.text ?? '' });
    }
    return out;
  }

  const form = (body: Record<string, string>) =>
    request(`${t.url}/v1/access/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body).toString(),
    });

  it('request access: the same answer for a private site and for no site; confirmed by mail, then listed', async () => {
    const signIn = await request(`${t.url}/v1/access/acquire?host=${hostOf(space.slug)}&return=/docs/a`);
    const page = await signIn.body.text();
    expect(page).toMatch(
      new RegExp(
        `/v1/access/request\\?host=${hostOf(space.slug).replace(/\./g, '\\.')}&(amp|#38);return=%2Fdocs%2Fa`,
      ),
    );
    const get = await request(`${t.url}/v1/access/request?host=${hostOf(space.slug)}&return=/docs/a`);
    expect(get.statusCode).toBe(200);
    expect(await get.body.text()).toContain('name="email"');

    const email = `asker-${db}@example.test`;
    const real = await form({ host: hostOf(space.slug), email, message: 'hello', return: '/docs/a' });
    const none = await form({ host: 'nothing-here.localhost', email, return: '/docs/a' });
    expect(real.statusCode).toBe(200);
    expect(none.statusCode).toBe(200);
    const [a, b] = [await real.body.text(), await none.body.text()];
    expect(a.replace(hostOf(space.slug), 'H')).toBe(b.replace('nothing-here.localhost', 'H'));

    const end = Date.now() + 15_000;
    let confirm: string | undefined;
    while (!confirm && Date.now() < end) {
      confirm = (await mails())
        .filter((m) => m.to.includes(email))
        .map(
          (m) => /(http:\/\/\S+\/v1\/access\/request\/confirm\?token=sprq_[A-Za-z0-9_-]+)/.exec(m.text)?.[1],
        )
        .find(Boolean);
      if (!confirm) await new Promise((r) => setTimeout(r, 50));
    }
    expect(confirm).toBeTruthy();
    expect((await mails()).filter((m) => m.to.includes(email))).toHaveLength(1);
    const before = await t.api('GET', `/v1/spaces/${space.id}/requests`, { token: owner.token });
    expect(before.body.data).toEqual([]);
    const u = new URL(confirm!);
    const ok = await request(`${t.url}${u.pathname}${u.search}`);
    expect(ok.statusCode).toBe(200);
    const again = await request(`${t.url}${u.pathname}${u.search}`);
    expect(again.statusCode).toBe(404);
    const listed = await t.api('GET', `/v1/spaces/${space.id}/requests`, { token: owner.token });
    expect(listed.body.data).toEqual([
      expect.objectContaining({ email, path: '/docs/a', message: 'hello', status: 'pending' }),
    ]);
  });

  it('request access: refuses what is no address, and limits posts per client address', async () => {
    const bad = await form({ host: hostOf(space.slug), email: 'not an address' });
    expect(bad.statusCode).toBe(422);
    await bad.body.text();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await form({ host: 'x.localhost', email: `n${i}@example.test` });
      statuses.push(r.statusCode);
      await r.body.text();
    }
    expect(statuses).toContain(429);
  });
});
