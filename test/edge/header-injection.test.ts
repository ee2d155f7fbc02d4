import { afterAll, beforeAll, expect, it } from 'vitest';
import { signSiteToken } from '../../src/serve/access.ts';
import { exchange, get, header, type RawExchange } from '../helpers/raw-http.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, manifestOf, publishViaVersions, putBytes, type Site } from '../publishing/helpers.ts';

// Issue #17, header bytes: headers are written as latin1, one byte per UTF-16 code unit, so a
// character above U+00FF loses its high byte — U+010D U+010A go out as CR LF. A site could then write
// its own `Set-Cookie: …; Domain=<base domain>` or a whole extra response on a keep-alive connection.
// These tests speak raw HTTP/1.1 so every byte on the wire is checked.

// No spaces, so it stays one token in a `_redirects` line.
const SMUGGLE = '\u010d\u010aSet-Cookie:pwn=1;Domain=localhost';

/** Characters that could put a byte on the wire the author did not validly write. */
const TABLE: Array<[label: string, ch: string, urlEncodes: boolean]> = [
  ['CR', '\r', false],
  ['NUL', '\u0000', false],
  ['U+0100', '\u0100', true],
  ['U+010D U+010A', SMUGGLE, true],
  ['U+FFFF', '\uffff', true],
  ['astral', '\u{1F600}', true],
  ['U+2028', '\u2028', false],
  ['U+2029', '\u2029', false],
];

/** No response has a header line the site did not validly write, and nothing follows the last. */
function expectClean(x: RawExchange, count: number) {
  expect(x.responses).toHaveLength(count);
  expect(x.rest).toBe('');
  for (const r of x.responses) {
    expect(r.lines.map(([n]) => n.toLowerCase())).not.toContain('set-cookie');
    for (const [n, v] of r.lines) expect(`${n}: ${v}`).toMatch(/^[\x20-\x7e]*$/);
  }
  expect(x.wire).not.toMatch(/\r\nSet-Cookie: pwn/i);
}

describeEachDb('header bytes on the wire', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  /** Creates and uploads a version and asks to finalize it; returns the finalize response. */
  async function finalize(spaceId: string, site: Site) {
    const created = await t.api('POST', `/v1/spaces/${spaceId}/versions`, {
      body: { files: manifestOf(site) },
    });
    expect(created.status).toBe(201);
    for (const tg of created.body.data.upload.targets) await putBytes(tg.url, site[tg.path]!);
    return t.api('POST', `/v1/spaces/${spaceId}/versions/${created.body.data.version.id}/finalize`);
  }

  it('finalize refuses them in _headers, config headers and _redirects; live stays as it was', async () => {
    const s = await createSpace(t, undefined, { slug: 'bytes-finalize', access: 'public' });
    await publishViaVersions(t, s.id, { 'index.html': 'live', _headers: '/*\n  X-Live: yes\n' });
    const host = 'bytes-finalize.localhost';
    for (const [label, ch, urlEncodes] of [
      ...TABLE,
      ['obs-fold', '\r\n folded', false] as [string, string, boolean],
    ]) {
      const fin = await finalize(s.id, {
        'index.html': `next ${label}`,
        _headers: `/*\n  X-Ok: 1\n  X-A: a${ch}b\n`,
        _redirects: `/go /a${ch}b 301\n`,
        'spaces.json': JSON.stringify({
          headers: [{ source: '/*', headers: [{ key: 'X-B', value: `a${ch}b` }] }],
        }),
      });
      expect(fin.status, label).toBe(422);
      expect(fin.body.code).toBe('version_failed');
      const diags: Array<{ code: string; path: string; details?: Record<string, unknown> }> =
        fin.body.details.diagnostics;
      // `_headers`: at the value's own line (a fold's CR LF makes the rest a line of its own).
      const headersDiag = diags.find((d) => d.path.startsWith('_headers:'));
      expect(headersDiag, label).toMatchObject({
        path: label === 'obs-fold' ? '_headers:4' : '_headers:3',
        code: label === 'obs-fold' ? 'header_syntax_invalid' : 'header_value_invalid',
      });
      // Config headers: at the value's pointer.
      expect(diags, label).toContainEqual(
        expect.objectContaining({
          code: 'config_invalid',
          path: 'spaces.json',
          details: expect.objectContaining({
            pointer: '/spaces.json/headers/0/headers/0/value',
            rule: 'header_value_invalid',
          }),
        }),
      );
      // `_redirects`: refused, unless a URL carries the character percent-encoded (below).
      expect(
        diags.some((d) => d.path.startsWith('_redirects:')),
        label,
      ).toBe(!urlEncodes);
    }
    const live = await exchange(t.port, get(host, '/', true));
    expectClean(live, 1);
    expect(live.responses[0]!.body).toBe('live');
    expect(header(live.responses[0]!, 'x-live')).toBe('yes');
  });

  it('an empty header value is refused, in _headers and in config headers', async () => {
    const s = await createSpace(t, undefined, { slug: 'bytes-empty', access: 'public' });
    const fin = await finalize(s.id, { 'index.html': 'x', _headers: '/*\n  X-Empty:\n' });
    expect(fin.status).toBe(422);
    expect(fin.body.details.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'header_value_empty', path: '_headers:2' }),
    );
    const cfg = await finalize(s.id, {
      'index.html': 'x',
      'spaces.json': JSON.stringify({
        headers: [{ source: '/*', headers: [{ key: 'X-Empty', value: '' }] }],
      }),
    });
    expect(cfg.status).toBe(422);
    expect(cfg.body.details.diagnostics).toContainEqual(
      expect.objectContaining({
        code: 'config_invalid',
        details: expect.objectContaining({
          pointer: '/spaces.json/headers/0/headers/0/value',
          rule: 'header_value_empty',
        }),
      }),
    );
    // The settings overlay obeys the same rule, with the API's own pointer.
    const put = await t.api('PATCH', `/v1/spaces/${s.id}`, {
      body: { config: { headers: [{ source: '/*', headers: [{ key: 'X-A', value: `a${SMUGGLE}` }] }] } },
    });
    expect(put.status).toBe(400);
    expect(put.body).toMatchObject({
      code: 'validation_error',
      pointer: '/config/headers/0/headers/0/value',
    });
  });

  it('a Set-Cookie cannot gain a Domain: not through U+010D U+010A, not through a URL capture', async () => {
    const s = await createSpace(t, undefined, { slug: 'bytes-cookie', access: 'public' });
    const smuggled = await finalize(s.id, {
      'index.html': 'x',
      _headers: `/*\n  Set-Cookie: a=1${SMUGGLE}\n`,
    });
    expect(smuggled.status).toBe(422);
    expect(smuggled.body.details.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'header_value_invalid', path: '_headers:2' }),
    );
    await publishViaVersions(t, s.id, {
      'index.html': 'x',
      _redirects: '/c/* /index.html 200\n',
      _headers: '/c/*\n  Set-Cookie: c=:splat; Path=/\n',
    });
    const host = 'bytes-cookie.localhost';
    // Twice: the second answer comes from the fast lane's memory.
    const path = '/c/x;Domain=localhost,b=2';
    const x = await exchange(t.port, get(host, path) + get(host, path, true));
    expect(x.responses.map((r) => r.status)).toEqual([200, 200]);
    expect(x.rest).toBe('');
    for (const r of x.responses) {
      const cookies = r.lines.filter(([n]) => n.toLowerCase() === 'set-cookie').map(([, v]) => v);
      expect(cookies).toEqual(['c=x%3BDomain%3Dlocalhost%2Cb%3D2; Path=/']);
    }
  });

  it('captures from the URL reach headers and Location encoded', async () => {
    const s = await createSpace(t, undefined, { slug: 'bytes-captures', access: 'public' });
    await publishViaVersions(t, s.id, {
      'ok.txt': 'ok',
      _redirects: '/p/* /ok.txt 200\n/r/* /to/:splat 301\n',
      _headers: '/p/*\n  X-Path: :splat\n',
    });
    const host = 'bytes-captures.localhost';
    const tail = '%C4%8D%C4%8ASet-Cookie:%20x=1;%20Domain=localhost';
    const x = await exchange(
      t.port,
      get(host, `/p/${tail}`) + get(host, `/r/${tail}`) + get(host, `/r/${tail}`, true),
    );
    expectClean(x, 3);
    expect(header(x.responses[0]!, 'x-path')).toBe(
      '%C4%8D%C4%8ASet-Cookie%3A%20x%3D1%3B%20Domain%3Dlocalhost',
    );
    for (const r of x.responses.slice(1)) {
      expect(r.status).toBe(301);
      expect(header(r, 'location')).toBe(`/to/${tail}`);
    }
  });

  it('non-ASCII destinations go out percent-encoded, through the lane and node:http alike', async () => {
    const s = await createSpace(t, undefined, { slug: 'bytes-redirect', access: 'public' });
    await publishViaVersions(t, s.id, {
      'index.html': 'x',
      _redirects: `/go /a${SMUGGLE} 301\n/cafe /café 302\n`,
    });
    const host = 'bytes-redirect.localhost';
    const x = await exchange(t.port, get(host, '/go') + get(host, '/go') + get(host, '/cafe', true));
    expectClean(x, 3);
    expect(x.responses.map((r) => [r.status, header(r, 'location')])).toEqual([
      [301, '/a%C4%8D%C4%8ASet-Cookie:pwn=1;Domain=localhost'],
      [301, '/a%C4%8D%C4%8ASet-Cookie:pwn=1;Domain=localhost'],
      [302, '/caf%C3%A9'],
    ]);
  });

  it('return paths from the visitor reach Location percent-encoded (access hand-off)', async () => {
    const s = await createSpace(t, undefined, { slug: 'bytes-access' });
    await publishViaVersions(t, s.id, { 'index.html': 'members' });
    const host = 'bytes-access.localhost';
    const secret = await t.server.services.store.repos.meta.secret('site');
    const token = signSiteToken(secret, 'handoff', host, s.id, 'usr_x', Date.now() + 60_000);
    const back = encodeURIComponent(`/a${SMUGGLE}`);
    const x = await exchange(t.port, get(host, `/__service/access?token=${token}&return=${back}`, true));
    expect(x.responses).toHaveLength(1);
    expect(x.rest).toBe('');
    expect(x.responses[0]!.status).toBe(303);
    // The platform's own access cookie, and no other.
    const cookies = x.responses[0]!.lines.filter(([n]) => n.toLowerCase() === 'set-cookie');
    expect(cookies).toHaveLength(1);
    expect(cookies[0]![1]).toMatch(/^__spaces_access=/);
    expect(header(x.responses[0]!, 'location')).toBe('/a%C4%8D%C4%8ASet-Cookie:pwn=1;Domain=localhost');
  });

  it('rules stored before the check: the writers never send such a byte (500, and the connection lives on)', async () => {
    const s = await createSpace(t, undefined, { slug: 'bytes-stored', access: 'public' });
    const v = await publishViaVersions(t, s.id, {
      'bad.txt': 'bad',
      'ok.txt': 'ok',
      _headers: '/bad.txt\n  X-Evil: PLACEHOLDER\n',
      _redirects: '/go /PLACEHOLDER 301\n',
    });
    // As if finalized by a server without the check: the stored rules carry the raw characters.
    const db = t.server.services.database.db;
    const row = await db
      .selectFrom('versions')
      .select('rules')
      .where('id', '=', v.finalized.version.id)
      .executeTakeFirstOrThrow();
    const rules = JSON.stringify(JSON.parse(row.rules!)).replaceAll('PLACEHOLDER', `x${SMUGGLE}`);
    await db.updateTable('versions').set({ rules }).where('id', '=', v.finalized.version.id).execute();

    const host = 'bytes-stored.localhost';
    const before = t.server.fastLane!.answered;
    const warm = await exchange(t.port, get(host, '/ok.txt') + get(host, '/ok.txt', true));
    expectClean(warm, 2);
    const lane = t.server.fastLane!.answered;
    expect(lane).toBe(before + 2);
    // Keep-alive, pipelined: the bad answer, then a good one on the same connection.
    const x = await exchange(
      t.port,
      get(host, '/bad.txt') +
        get(host, '/ok.txt') +
        get(host, '/bad.txt', false, 'Accept: application/json\r\n') +
        get(host, '/ok.txt', true),
    );
    expectClean(x, 4);
    expect(x.responses.map((r) => r.status)).toEqual([500, 200, 500, 200]);
    expect(x.responses[1]!.body).toBe('ok');
    expect(header(x.responses[2]!, 'content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(x.responses[2]!.body)).toMatchObject({ status: 500 });
    expect(x.wire).not.toContain('X-Evil');
    // The lane declined the bad answer (node:http answered it) rather than writing it.
    expect(t.server.fastLane!.answered).toBe(lane);
    // A stored redirect destination is encoded on its way out.
    const r = await exchange(t.port, get(host, '/go') + get(host, '/go', true));
    expectClean(r, 2);
    for (const res of r.responses) {
      expect(header(res, 'location')).toBe('/x%C4%8D%C4%8ASet-Cookie:pwn=1;Domain=localhost');
    }
  });
});
