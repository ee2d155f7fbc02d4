import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { macMatches } from '../base64url.ts';
import { locationValue } from '../site/field.ts';
import { parseCookies, SERVICE_COOKIE_PREFIX, serializeCookie } from './cookies.ts';
import { escapeHtml } from './inject.ts';
import { renderDocument, SYSTEM_PAGE_HEADERS } from './pages.ts';

/**
 * The firewall `challenge` action, with no third-party service: the visitor's browser solves a small
 * proof of work (find `s` so that `sha256(token + ":" + s)` starts with `difficulty` zero bits) over a
 * server-signed, expiring token, posts it to `POST /__service/challenge` on the site host, and gets a
 * signed, short-lived, HttpOnly clearance cookie bound to that host. The edge lets requests with a
 * valid clearance cookie past `challenge` rules.
 *
 * Tokens are stateless (HMAC over host, expiry, randomness and difficulty), so they work across
 * processes; a solved token can be redeemed more than once until it expires, which only yields the
 * same clearance again.
 */

export const CHALLENGE_PATH = '/__service/challenge';
export const CHALLENGE_COOKIE = `${SERVICE_COOKIE_PREFIX}_clearance`;
export const DEFAULT_DIFFICULTY = 16;
export const MAX_DIFFICULTY = 28;
export const TOKEN_TTL_MS = 5 * 60 * 1000;
export const CLEARANCE_TTL_MS = 30 * 60 * 1000;
const MAX_BODY_BYTES = 4096;

function b64url(buf: Buffer): string {
  return buf.toString('base64url');
}

function hmac(secret: string | Buffer, data: string): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

/** The hostname a cookie or token is bound to: lowercase, no port, no trailing dot. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end === -1 ? h : h.slice(0, end + 1);
  }
  const colon = h.lastIndexOf(':');
  if (colon !== -1) h = h.slice(0, colon);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

export interface ChallengeToken {
  token: string;
  expiresAt: number;
  difficulty: number;
}

/** A signed challenge token for `host`: `<expiryMs>.<random>.<difficulty>.<signature>`. */
export function createChallengeToken(
  host: string,
  secret: string | Buffer,
  now: Date,
  difficulty = DEFAULT_DIFFICULTY,
): ChallengeToken {
  const d = Math.max(1, Math.min(MAX_DIFFICULTY, Math.floor(difficulty)));
  const exp = now.getTime() + TOKEN_TTL_MS;
  const rand = b64url(randomBytes(16));
  const sig = b64url(hmac(secret, `challenge|${normalizeHost(host)}|${exp}|${rand}|${d}`));
  return { token: `${exp}.${rand}.${d}.${sig}`, expiresAt: exp, difficulty: d };
}

/** Leading zero bits of a digest. */
export function leadingZeroBits(digest: Buffer): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

export type ChallengeFailure = 'malformed' | 'bad_signature' | 'expired' | 'too_easy' | 'wrong_solution';

/** Checks a token and its solution; `null` when valid. */
export function verifySolution(
  host: string,
  secret: string | Buffer,
  now: Date,
  token: string,
  solution: string,
  minDifficulty = 1,
): ChallengeFailure | null {
  const parts = token.split('.');
  if (parts.length !== 4 || !/^\d{1,16}$/.test(parts[0]) || !/^\d{1,2}$/.test(parts[2])) return 'malformed';
  if (!/^[0-9]{1,16}$/.test(solution)) return 'malformed';
  const [expStr, rand, dStr, sig] = parts;
  const expected = hmac(secret, `challenge|${normalizeHost(host)}|${expStr}|${rand}|${dStr}`);
  if (!macMatches(sig, expected)) return 'bad_signature';
  if (Number(expStr) <= now.getTime()) return 'expired';
  const d = Number(dStr);
  if (d < minDifficulty) return 'too_easy';
  const digest = createHash('sha256').update(`${token}:${solution}`).digest();
  return leadingZeroBits(digest) >= d ? null : 'wrong_solution';
}

/** The clearance cookie value: `<expiryMs>.<HMAC(host, expiry)>`. */
export function createClearance(
  host: string,
  secret: string | Buffer,
  now: Date,
  ttlMs = CLEARANCE_TTL_MS,
): string {
  const exp = now.getTime() + ttlMs;
  return `${exp}.${b64url(hmac(secret, `clearance|${normalizeHost(host)}|${exp}`))}`;
}

/** Whether the request carries a valid, unexpired clearance cookie for this host. */
export function verifyChallengeCookie(
  req: IncomingMessage,
  host: string,
  secret: string | Buffer,
  now: Date,
): boolean {
  const raw = req.headers.cookie;
  const value = parseCookies(Array.isArray(raw) ? raw.join('; ') : raw).get(CHALLENGE_COOKIE);
  if (!value) return false;
  const dot = value.indexOf('.');
  if (dot === -1) return false;
  const expStr = value.slice(0, dot);
  if (!/^\d{1,16}$/.test(expStr)) return false;
  if (!macMatches(value.slice(dot + 1), hmac(secret, `clearance|${normalizeHost(host)}|${expStr}`)))
    return false;
  const exp = Number(expStr);
  // A clearance can't be valid for longer than the TTL from now (guards against a leaked secret's forever cookies).
  return exp > now.getTime() && exp <= now.getTime() + CLEARANCE_TTL_MS;
}

/** Only same-site absolute paths are accepted as the place to return to. */
export function safeReturnPath(value: string | null | undefined): string {
  if (!value?.startsWith('/') || value.startsWith('//')) return '/';
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return '/';
  // Form input, so any character at all: it becomes a `Location`, which carries ASCII only.
  return locationValue(value);
}

/** A small SHA-256 for browsers without WebCrypto (plain-http hostnames are not secure contexts). */
export const JS_SHA256 =
  'function sha256js(s){var K=[],H=[],i,j,p=Math.pow;function f(x){return(x-(x|0))*4294967296|0}' +
  'for(var n=2,c=0;c<64;n++){for(j=2;j*j<=n&&n%j;j++);if(j*j>n){if(c<8)H[c]=f(p(n,1/2));K[c++]=f(p(n,1/3))}}' +
  'var b=unescape(encodeURIComponent(s)),l=b.length,w=[];for(i=0;i<l;i++)w[i>>2]|=b.charCodeAt(i)<<(24-i%4*8);' +
  'w[l>>2]|=128<<(24-l%4*8);var L=((l+8)>>6)*16+15;w[L]=l*8;for(i=0;i<=L;i++)w[i]=w[i]|0;var h=H.slice(0);' +
  'function r(x,y){return x>>>y|x<<(32-y)}for(i=0;i<=L;i+=16){var a=h.slice(0),W=[];for(j=0;j<64;j++){' +
  'if(j<16)W[j]=w[i+j];else{var x=W[j-15],y=W[j-2];W[j]=(r(x,7)^r(x,18)^x>>>3)+W[j-7]+(r(y,17)^r(y,19)^y>>>10)+W[j-16]|0}' +
  'var t1=a[7]+(r(a[4],6)^r(a[4],11)^r(a[4],25))+(a[4]&a[5]^~a[4]&a[6])+K[j]+W[j]|0,' +
  't2=(r(a[0],2)^r(a[0],13)^r(a[0],22))+(a[0]&a[1]^a[0]&a[2]^a[1]&a[2])|0;a.unshift(t1+t2|0);a[4]=a[4]+t1|0;a.pop()}' +
  'for(j=0;j<8;j++)h[j]=h[j]+a[j]|0}var o=new Uint8Array(32);for(i=0;i<32;i++)o[i]=h[i>>2]>>>(24-i%4*8)&255;return o}';

export function challengeScript(): string {
  return (
    `${JS_SHA256}` +
    'function zb(u){var z=0;for(var i=0;i<u.length;i++){if(u[i]===0){z+=8;continue}return z+Math.clz32(u[i])-24}return z}' +
    'async function solve(t,d){var enc=new TextEncoder(),sub=window.crypto&&crypto.subtle;' +
    'for(var s=0;;s++){var m=t+":"+s;var u=sub?new Uint8Array(await sub.digest("SHA-256",enc.encode(m))):sha256js(m);' +
    'if(zb(u)>=d)return s;if(s%2000===0){document.getElementById("p").textContent=s+" tries";await new Promise(function(r){setTimeout(r,0)})}}}' +
    'var f=document.getElementById("f");solve(f.token.value,+f.dataset.d).then(function(s){f.solution.value=String(s);f.submit()});'
  );
}

export interface ChallengePageOptions {
  host: string;
  secret: string | Buffer;
  now: Date;
  difficulty?: number;
  /** The path to return to after solving (the request's own path and query). */
  returnTo: string;
  status?: number;
}

/** The challenge page: 403, strict CSP with a per-response script nonce, and a `<noscript>` explanation. */
export function renderChallengePage(opts: ChallengePageOptions): {
  status: number;
  headers: Record<string, string>;
  body: string;
} {
  const t = createChallengeToken(opts.host, opts.secret, opts.now, opts.difficulty);
  const nonce = b64url(randomBytes(16));
  const content =
    '<p>This site checks that visitors are browsers before letting them in. Your browser is solving a small puzzle; this takes a few seconds and happens once per half hour.</p>' +
    '<p id="p" aria-live="polite">Working…</p>' +
    `<form id="f" method="post" action="${CHALLENGE_PATH}" data-d="${t.difficulty}">` +
    `<input type="hidden" name="token" value="${escapeHtml(t.token)}">` +
    '<input type="hidden" name="solution" value="">' +
    `<input type="hidden" name="return" value="${escapeHtml(safeReturnPath(opts.returnTo))}"></form>` +
    '<noscript><p><strong>JavaScript is needed to pass this check.</strong> Turn it on for this site and reload the page. The check only computes a hash in your browser; nothing is sent anywhere else.</p></noscript>' +
    `<script nonce="${nonce}">${challengeScript()}</script>`;
  const body = renderDocument({ status: 403, title: 'Checking your browser', content });
  return {
    status: opts.status ?? 403,
    headers: {
      ...SYSTEM_PAGE_HEADERS,
      'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
    },
    body,
  };
}

export function sendChallengePage(
  req: IncomingMessage,
  res: ServerResponse,
  opts: ChallengePageOptions,
): void {
  const page = renderChallengePage(opts);
  res.writeHead(page.status, page.headers);
  res.end(req.method === 'HEAD' ? undefined : page.body);
}

export interface VerifyOptions {
  host: string;
  secret: string | Buffer;
  now: Date;
  /** Whether the visitor came over https (the cookie is then `Secure`). */
  secure: boolean;
  /** Lowest difficulty accepted (tokens carry their signed difficulty). */
  minDifficulty?: number;
}

export function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendFailure(
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
  allow?: string,
): void {
  const body = renderDocument({
    status,
    title,
    content: `<p>${escapeHtml(detail)}</p><p><a href="/">Try again</a></p>`,
  });
  const headers: Record<string, string> = {
    ...SYSTEM_PAGE_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
  };
  if (allow) headers.Allow = allow;
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * `POST /__service/challenge` (form-encoded `token`, `solution`, `return`): on success sets the
 * clearance cookie and answers 303 to the return path; otherwise 403 (bad or expired solution),
 * 405, 413 or 415.
 */
export async function handleChallengeVerify(
  req: IncomingMessage,
  res: ServerResponse,
  opts: VerifyOptions,
): Promise<{ ok: boolean; failure?: ChallengeFailure | 'method' | 'too_large' | 'media_type' }> {
  if (req.method !== 'POST') {
    req.resume();
    sendFailure(res, 405, 'Method not allowed', 'This address only answers POST.', 'POST');
    return { ok: false, failure: 'method' };
  }
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume();
    sendFailure(res, 415, 'Unsupported form', 'The check expects a form submission.');
    return { ok: false, failure: 'media_type' };
  }
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body === null) {
    sendFailure(res, 413, 'Too large', 'The form is larger than the check accepts.');
    return { ok: false, failure: 'too_large' };
  }
  const form = new URLSearchParams(body);
  const failure = verifySolution(
    opts.host,
    opts.secret,
    opts.now,
    form.get('token') ?? '',
    form.get('solution') ?? '',
    opts.minDifficulty ?? 1,
  );
  if (failure) {
    sendFailure(
      res,
      403,
      'The check did not pass',
      failure === 'expired'
        ? 'The check took too long. Reload the page to try again.'
        : 'The check did not pass. Reload the page to try again.',
    );
    return { ok: false, failure };
  }
  const cookie = serializeCookie(CHALLENGE_COOKIE, createClearance(opts.host, opts.secret, opts.now), {
    maxAge: CLEARANCE_TTL_MS / 1000,
    httpOnly: true,
    secure: opts.secure,
    sameSite: 'Lax',
    path: '/',
  });
  res.writeHead(303, {
    Location: safeReturnPath(form.get('return')),
    'Set-Cookie': cookie,
    'Cache-Control': 'no-store',
    'Content-Length': '0',
    'Referrer-Policy': 'no-referrer',
  });
  res.end();
  return { ok: true };
}
