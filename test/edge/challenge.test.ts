import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHALLENGE_COOKIE,
  CHALLENGE_PATH,
  CLEARANCE_TTL_MS,
  challengeScript,
  createChallengeToken,
  createClearance,
  handleChallengeVerify,
  JS_SHA256,
  leadingZeroBits,
  normalizeHost,
  renderChallengePage,
  safeReturnPath,
  verifyChallengeCookie,
  verifySolution,
} from '../../src/serve/challenge.ts';
import { get, type Served, serve } from './helpers.ts';

const SECRET = 'x'.repeat(32);
const now = new Date('2026-05-01T12:00:00Z');

function solve(token: string, d: number): string {
  for (let s = 0; ; s++) {
    if (leadingZeroBits(createHash('sha256').update(`${token}:${s}`).digest()) >= d) return String(s);
  }
}

const withCookie = (cookie: string) => ({ headers: { cookie } }) as unknown as IncomingMessage;

describe('challenge tokens and clearance', () => {
  it('counts leading zero bits', () => {
    expect(leadingZeroBits(Buffer.from([0, 0, 0x80]))).toBe(16);
    expect(leadingZeroBits(Buffer.from([0x0f]))).toBe(4);
    expect(leadingZeroBits(Buffer.from([0, 1]))).toBe(15);
    expect(leadingZeroBits(Buffer.from([0xff]))).toBe(0);
  });

  it('accepts a correct solution and refuses tampering, expiry and wrong hosts', () => {
    const t = createChallengeToken('Site.Example:8080', SECRET, now, 8);
    const s = solve(t.token, 8);
    expect(verifySolution('site.example', SECRET, now, t.token, s)).toBeNull();
    expect(verifySolution('other.example', SECRET, now, t.token, s)).toBe('bad_signature');
    expect(verifySolution('site.example', 'y'.repeat(32), now, t.token, s)).toBe('bad_signature');
    const later = new Date(t.expiresAt);
    expect(verifySolution('site.example', SECRET, later, t.token, s)).toBe('expired');
    const easier = t.token.replace(/\.8\./, '.1.');
    expect(verifySolution('site.example', SECRET, now, easier, s)).toBe('bad_signature');
    expect(verifySolution('site.example', SECRET, now, t.token, s, 12)).toBe('too_easy');
    let wrong = 0;
    while (leadingZeroBits(createHash('sha256').update(`${t.token}:${wrong}`).digest()) >= 8) wrong++;
    expect(verifySolution('site.example', SECRET, now, t.token, String(wrong))).toBe('wrong_solution');
    expect(verifySolution('site.example', SECRET, now, 'garbage', s)).toBe('malformed');
    expect(verifySolution('site.example', SECRET, now, t.token, '-1')).toBe('malformed');
  });

  it('verifies the clearance cookie for its host only, until it expires', () => {
    const c = createClearance('site.example', SECRET, now);
    const req = withCookie(`a=b; ${CHALLENGE_COOKIE}=${c}`);
    expect(verifyChallengeCookie(req, 'site.example', SECRET, now)).toBe(true);
    expect(verifyChallengeCookie(req, 'SITE.example:443', SECRET, now)).toBe(true);
    expect(verifyChallengeCookie(req, 'other.example', SECRET, now)).toBe(false);
    expect(verifyChallengeCookie(req, 'site.example', 'z'.repeat(32), now)).toBe(false);
    expect(
      verifyChallengeCookie(req, 'site.example', SECRET, new Date(now.getTime() + CLEARANCE_TTL_MS)),
    ).toBe(false);
    const [exp, sig] = c.split('.');
    const extended = withCookie(`${CHALLENGE_COOKIE}=${Number(exp) + 1000}.${sig}`);
    expect(verifyChallengeCookie(extended, 'site.example', SECRET, now)).toBe(false);
    // Other spellings of the same signature bytes (padding, a stray character) are not the cookie.
    for (const other of [
      `${sig}=`,
      `${sig.slice(0, 4)}.${sig.slice(4)}`,
      `${sig.slice(0, 4)}*${sig.slice(4)}`,
    ])
      expect(
        verifyChallengeCookie(withCookie(`${CHALLENGE_COOKIE}=${exp}.${other}`), 'site.example', SECRET, now),
        other,
      ).toBe(false);
    expect(verifyChallengeCookie(withCookie(`${CHALLENGE_COOKIE}=junk`), 'site.example', SECRET, now)).toBe(
      false,
    );
    expect(verifyChallengeCookie(withCookie(''), 'site.example', SECRET, now)).toBe(false);
  });

  it('keeps return paths on the site', () => {
    expect(safeReturnPath('/a?b=1')).toBe('/a?b=1');
    // A form value becomes a Location: beyond ASCII it is percent-encoded, never written as latin1.
    expect(safeReturnPath('/a\u010d\u010aSet-Cookie: x=1')).toBe('/a%C4%8D%C4%8ASet-Cookie:%20x=1');
    for (const bad of ['//evil.com', '/\\evil.com', 'https://evil.com', '', null, '/a\nb', 'javascript:x']) {
      expect(safeReturnPath(bad)).toBe('/');
    }
    expect(normalizeHost('[::1]:8080')).toBe('[::1]');
    expect(normalizeHost('Example.COM.')).toBe('example.com');
  });
});

describe('challenge page script', () => {
  it('embeds a SHA-256 that matches node for ASCII and UTF-8 input', () => {
    const ctx = vm.createContext({ unescape, encodeURIComponent, Uint8Array, Math });
    vm.runInContext(JS_SHA256, ctx);
    for (const input of ['', 'abc', 'a'.repeat(55), 'b'.repeat(64), 'c'.repeat(200), 'héllo ☃']) {
      const out = Buffer.from(
        vm.runInContext(`Array.from(sha256js(${JSON.stringify(input)}))`, ctx) as number[],
      );
      expect(out.toString('hex'), input).toBe(createHash('sha256').update(input).digest('hex'));
    }
  });

  it('solves a token and submits the form (simulated browser, no WebCrypto)', async () => {
    const t = createChallengeToken('site.example', SECRET, now, 8);
    const form = {
      dataset: { d: '8' },
      token: { value: t.token },
      solution: { value: '' },
      submitted: false,
      submit() {
        this.submitted = true;
      },
    };
    const ctx = vm.createContext({
      unescape,
      encodeURIComponent,
      Uint8Array,
      Math,
      TextEncoder,
      Promise,
      setTimeout,
      String,
      window: {},
      document: { getElementById: (id: string) => (id === 'f' ? form : { textContent: '' }) },
    });
    vm.runInContext(challengeScript(), ctx);
    for (let i = 0; i < 200 && !form.submitted; i++) await new Promise((r) => setTimeout(r, 5));
    expect(form.submitted).toBe(true);
    expect(verifySolution('site.example', SECRET, now, t.token, form.solution.value)).toBeNull();
  });

  it('renders with a nonce CSP, the token, a noscript explanation and an escaped return path', () => {
    const p = renderChallengePage({ host: 'site.example', secret: SECRET, now, returnTo: '/x?"><script>' });
    expect(p.status).toBe(403);
    const nonce = /script-src 'nonce-([^']+)'/.exec(p.headers['Content-Security-Policy'])![1];
    expect(p.body).toContain(`<script nonce="${nonce}">`);
    expect(p.body).toContain('<noscript>');
    expect(p.body).toContain(`action="${CHALLENGE_PATH}"`);
    expect(p.body).not.toContain('"><script>');
    expect(p.headers['Cache-Control']).toBe('no-store');
    expect(p.headers['Content-Security-Policy']).toContain("form-action 'self'");
    expect(p.body).not.toMatch(/src="https?:/);
  });
});

describe('POST /__service/challenge', () => {
  let srv: Served;
  let secure = false;
  beforeAll(async () => {
    srv = await serve((req, res) => {
      void handleChallengeVerify(req, res, {
        host: req.headers.host!,
        secret: SECRET,
        now,
        secure,
        minDifficulty: 4,
      });
    });
  });
  afterAll(() => srv.close());

  const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    get(`${srv.url}${CHALLENGE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'site.example', ...headers },
      body: new URLSearchParams(form).toString(),
    });

  it('sets a host-only HttpOnly SameSite=Lax cookie and redirects back', async () => {
    const t = createChallengeToken('site.example', SECRET, now, 6);
    const r = await post({ token: t.token, solution: solve(t.token, 6), return: '/deep/page?x=1' });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe('/deep/page?x=1');
    const cookie = r.headers['set-cookie']![0];
    expect(cookie).toMatch(new RegExp(`^${CHALLENGE_COOKIE}=`));
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Max-Age=1800');
    expect(cookie).not.toContain('Secure');
    expect(cookie).not.toMatch(/Domain=/i);
    const value = decodeURIComponent(cookie.split(';')[0].split('=')[1]);
    expect(
      verifyChallengeCookie(withCookie(`${CHALLENGE_COOKIE}=${value}`), 'site.example', SECRET, now),
    ).toBe(true);
    secure = true;
    const t2 = createChallengeToken('site.example', SECRET, now, 6);
    const r2 = await post({ token: t2.token, solution: solve(t2.token, 6), return: '//evil.com' });
    expect(r2.headers['set-cookie']![0]).toContain('Secure');
    expect(r2.headers.location).toBe('/');
    secure = false;
  });

  it('refuses wrong solutions, other hosts, weak tokens and bad requests', async () => {
    const t = createChallengeToken('site.example', SECRET, now, 6);
    const s = solve(t.token, 6);
    expect((await post({ token: t.token, solution: s }, { host: 'other.example' })).status).toBe(403);
    expect((await post({ token: t.token, solution: '' })).status).toBe(403);
    const weak = createChallengeToken('site.example', SECRET, now, 2);
    expect((await post({ token: weak.token, solution: solve(weak.token, 2) })).status).toBe(403);
    expect((await get(`${srv.url}${CHALLENGE_PATH}`, { headers: { host: 'site.example' } })).status).toBe(
      405,
    );
    expect((await post({ token: t.token, solution: s }, { 'content-type': 'application/json' })).status).toBe(
      415,
    );
    expect((await post({ token: 'x'.repeat(5000), solution: s })).status).toBe(413);
  });
});
