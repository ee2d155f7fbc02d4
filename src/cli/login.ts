import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpacesProblem } from '../sdk/index.ts';
import type { Context } from './context.ts';
import { CLIENT_ID, oauthProblem, postForm, SCOPES, type TokenSet, tokenSetOf } from './oauth-form.ts';
import { oauthFetch } from './transport.ts';

/** How long the CLI waits for the browser to come back. */
const WAIT_MS = 10 * 60_000;

const page = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title>` +
  `<body style="font:16px system-ui,sans-serif;max-width:36rem;margin:4rem auto"><h1>${title}</h1><p>${text}</p>`;

/**
 * Login in the browser: OAuth authorization code with PKCE (S256) and a loopback redirect
 * (RFC 8252 §7.3) — `http://127.0.0.1:<free port>/callback`, the redirect the built-in `spaces-cli`
 * client may use on any port. It asks for `offline_access`, so a refresh token comes back and the login
 * renews itself (see credentials.ts). The browser must run on this machine (it is sent to 127.0.0.1);
 * elsewhere, `spaces login --device`.
 */
export async function browserLogin(
  ctx: Context,
  o: { browser: boolean; open: (url: string) => void; waitMs?: number },
): Promise<TokenSet> {
  // A server that isn't there (another port, not started) is said now, not after a wait for a
  // browser that can't load the page either.
  await oauthFetch()(`${ctx.apiUrl}/healthz`).then((res) => res.body?.cancel());
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  let settle!: { resolve: (code: string) => void; reject: (err: Error) => void };
  const answered = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  answered.catch(() => {}); // awaited below, once the URL is out
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const q = url.searchParams;
    // Only the answer to this login counts; anything else that finds the port is turned away.
    if (req.method !== 'GET' || url.pathname !== '/callback' || q.get('state') !== state) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page('Not found', 'This address only takes the answer to a <code>spaces login</code>.'));
      return;
    }
    const code = q.get('code');
    res.writeHead(code ? 200 : 400, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
    if (code) {
      res.end(
        page('You are logged in', 'The <code>spaces</code> CLI has your login. You can close this tab.'),
      );
      settle.resolve(code);
    } else {
      res.end(page('Login refused', 'Nothing was stored. Run <code>spaces login</code> again to retry.'));
      settle.reject(
        oauthProblem(400, { error: q.get('error'), error_description: q.get('error_description') }, 'Login'),
      );
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const authorize = new URL(`${ctx.apiUrl}/v1/auth/oauth2/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: redirectUri,
    scope: `offline_access ${SCOPES}`,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const url = authorize.toString();
  if (o.browser) {
    ctx.err(`Opening your browser to log in to ${ctx.apiUrl}. If it does not open, visit:\n  ${url}`);
    o.open(url);
  } else {
    ctx.err(`To log in to ${ctx.apiUrl}, open this URL in a browser on this machine:\n  ${url}`);
    ctx.err('No browser on this machine? `spaces login --device` logs in from another device.');
  }
  const timer = setTimeout(
    () =>
      settle.reject(
        new SpacesProblem({
          type: 'about:blank',
          title: 'Login timed out',
          status: 0,
          code: 'login_timeout',
          detail: 'The browser did not come back in time.',
          requestId: '',
          suggestions: [
            'Run `spaces login` again, or `spaces login --device` on a machine without a browser.',
          ],
        }),
      ),
    o.waitMs ?? WAIT_MS,
  );
  try {
    const code = await answered;
    const r = await postForm(`${ctx.apiUrl}/v1/auth/oauth2/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: CLIENT_ID,
    });
    const tokens = r.status === 200 ? tokenSetOf(r.body) : null;
    if (!tokens) throw oauthProblem(r.status, r.body, 'The token endpoint');
    return tokens;
  } finally {
    clearTimeout(timer);
    server.close();
    server.closeAllConnections();
  }
}
