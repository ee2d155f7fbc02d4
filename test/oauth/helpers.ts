import { createHash, randomBytes } from 'node:crypto';
import { request } from 'undici';
import { expect } from 'vitest';
import type { TestServer } from '../helpers/server.ts';

export const PASSWORD = 'correct horse battery';

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface PageResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  location: string | null;
}

/** A browser: a cookie jar over undici, following nothing on its own. */
export class Browser {
  readonly cookies = new Map<string, string>();
  /** Sent with every request (e.g. a browser's `Accept`). */
  readonly headers: Record<string, string> = {};
  constructor(readonly base: string) {}

  private store(setCookie: string | string[] | undefined): void {
    for (const c of [setCookie ?? []].flat()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  }

  async send(method: string, path: string, form?: Record<string, string>): Promise<PageResponse> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (form) {
      body = new URLSearchParams(form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const url = path.startsWith('http') ? path : `${this.base}${path}`;
    const res = await request(url, { method: method as 'GET', headers, body });
    this.store(res.headers['set-cookie']);
    const text = await res.body.text();
    const loc = res.headers.location;
    return {
      status: res.statusCode,
      headers: res.headers,
      text,
      location: typeof loc === 'string' ? loc : null,
    };
  }

  get(path: string) {
    return this.send('GET', path);
  }
  post(path: string, form: Record<string, string>) {
    return this.send('POST', path, form);
  }

  /** Signs in through the page's own form (which carries the CSRF token) and follows back. */
  async signInVia(page: PageResponse, email: string, password = PASSWORD): Promise<PageResponse> {
    const form = formOf(page.text, '/v1/auth/oauth2/signin');
    const res = await this.post('/v1/auth/oauth2/signin', { ...form, email, password });
    expect(res.status).toBe(303);
    expect(String(res.headers['set-cookie'])).toMatch(
      /spaces_session=sfs_[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax/,
    );
    return this.get(res.location!);
  }
}

function unescapeHtml(s: string): string {
  return s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&');
}

/** The hidden inputs of the form posting to `action`. */
export function formOf(html: string, action: string): Record<string, string> {
  const start = html.indexOf(`action="${action}"`);
  if (start === -1) throw new Error(`no form posting to ${action} in:\n${html}`);
  const end = html.indexOf('</form>', start);
  const part = html.slice(start, end);
  const out: Record<string, string> = {};
  for (const m of part.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    out[unescapeHtml(m[1]!)] = unescapeHtml(m[2]!);
  }
  return out;
}

export async function signInUser(t: TestServer, name: string) {
  const email = `${name}-${randomBytes(3).toString('hex')}@example.test`;
  const created = await t.api('POST', '/v1/users', { body: { email, name, password: PASSWORD } });
  if (created.status !== 201) throw new Error(created.text);
  const session = await t.api('POST', '/v1/account/sessions', {
    token: null,
    body: { email, password: PASSWORD },
  });
  const me = await t.api('GET', '/v1/account', { token: session.body.data.token });
  return {
    email,
    token: session.body.data.token as string,
    userId: created.body.data.id as string,
    teamId: me.body.data.teams[0].id as string,
  };
}

export async function registerApp(
  t: TestServer,
  teamId: string,
  token: string,
  body: { name?: string; type?: 'confidential' | 'public'; redirectUris?: string[]; scopes?: string[] } = {},
): Promise<{ clientId: string; clientSecret: string | null }> {
  const res = await t.api('POST', `/v1/teams/${teamId}/oauth-apps`, {
    token,
    body: {
      name: body.name ?? 'Test app',
      type: body.type ?? 'confidential',
      redirectUris: body.redirectUris ?? ['https://app.example.com/callback'],
      scopes: body.scopes ?? ['teams:read', 'teams:create', 'offline_access'],
    },
  });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return { clientId: res.body.data.clientId, clientSecret: res.body.data.clientSecret };
}

/** POSTs form parameters to an OAuth endpoint; returns status, JSON body and headers. */
export async function oauthPost(
  t: TestServer,
  path: string,
  form: Record<string, string>,
  basic?: { id: string; secret: string },
) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (basic) {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(basic.id)}:${encodeURIComponent(basic.secret)}`).toString('base64')}`;
  }
  const res = await request(`${t.url}${path}`, {
    method: 'POST',
    headers,
    body: new URLSearchParams(form).toString(),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : null, text };
}

/**
 * Drives the browser part of the authorization-code flow: authorize → sign in → consent → approve.
 * Returns the redirect the server answered with.
 */
export async function authorizeInBrowser(
  b: Browser,
  email: string,
  q: Record<string, string>,
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  let page = await b.get(`/v1/auth/oauth2/authorize?${new URLSearchParams(q)}`);
  if (page.text.includes('action="/v1/auth/oauth2/signin"')) page = await b.signInVia(page, email);
  expect(page.status).toBe(200);
  expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(page.headers['x-frame-options']).toBe('DENY');
  const form = formOf(page.text, '/v1/auth/oauth2/authorize');
  expect(form.csrf_token).toBeTruthy();
  const res = await b.post('/v1/auth/oauth2/authorize', { ...form, decision });
  expect(res.status).toBe(303);
  return new URL(res.location!);
}
