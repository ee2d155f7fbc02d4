import { SpacesProblem } from '../sdk/index.ts';
import type { Context } from './context.ts';
import { CLIENT_ID, oauthProblem, postForm, SCOPES, type TokenSet, tokenSetOf } from './oauth-form.ts';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
}

/**
 * OAuth 2.0 Device Authorization Grant (RFC 8628): show the code and URL, poll the token endpoint at
 * `interval` seconds, add 5 s on `slow_down`, stop on `access_denied` / `expired_token` or expiry.
 * The interface keeps `offline_access` to the authorization-code flow: no refresh token comes back.
 */
export async function deviceLogin(
  ctx: Context,
  o: { browser: boolean; open: (url: string) => void; sleep?: (ms: number) => Promise<void> },
): Promise<TokenSet> {
  const sleep = o.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const start = await postForm(`${ctx.apiUrl}/v1/auth/oauth2/device`, {
    client_id: CLIENT_ID,
    scope: SCOPES,
  });
  if (start.status !== 200 || typeof start.body.device_code !== 'string') {
    if (start.status === 404) {
      throw new SpacesProblem({
        type: 'about:blank',
        title: 'Device login unavailable',
        status: 404,
        code: 'feature_unavailable',
        detail: `${ctx.apiUrl} does not offer device login.`,
        requestId: '',
        suggestions: ['Create an API key in the dashboard and run `spaces login --token <key>`.'],
      });
    }
    throw oauthProblem(start.status, start.body, 'The device authorization endpoint');
  }
  const d = start.body as unknown as DeviceAuthorization;
  const url = d.verification_uri_complete ?? d.verification_uri;
  ctx.err(`To log in, open ${d.verification_uri} and enter the code: ${d.user_code}`);
  if (d.verification_uri_complete) ctx.err(`(or open ${d.verification_uri_complete})`);
  if (ctx.json)
    ctx.writeJsonLine({
      event: 'device_code',
      userCode: d.user_code,
      verificationUri: d.verification_uri,
      verificationUriComplete: d.verification_uri_complete ?? null,
      expiresIn: d.expires_in,
    });
  if (o.browser && ctx.io.stderr.isTTY) o.open(url);
  let interval = Math.max(1, d.interval ?? 5) * 1000;
  const deadline = Date.now() + d.expires_in * 1000;
  while (Date.now() < deadline) {
    await sleep(interval);
    const r = await postForm(`${ctx.apiUrl}/v1/auth/oauth2/token`, {
      grant_type: DEVICE_GRANT,
      device_code: d.device_code,
      client_id: CLIENT_ID,
    });
    const tokens = r.status === 200 ? tokenSetOf(r.body) : null;
    if (tokens) return tokens;
    const error = r.body.error;
    if (error === 'authorization_pending') continue;
    if (error === 'slow_down') {
      interval += 5000;
      continue;
    }
    throw oauthProblem(r.status, r.body as { error?: string }, 'The token endpoint');
  }
  throw oauthProblem(
    400,
    { error: 'expired_token', error_description: 'The code expired before it was approved.' },
    '',
  );
}

/** RFC 7009 revocation of a token the CLI obtained; failure is reported, not fatal. */
export async function revokeToken(apiUrl: string, token: string): Promise<boolean> {
  try {
    const r = await postForm(`${apiUrl.replace(/\/+$/, '')}/v1/auth/oauth2/revoke`, {
      token,
      client_id: CLIENT_ID,
    });
    return r.status === 200;
  } catch {
    return false;
  }
}
