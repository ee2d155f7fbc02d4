import { SpacesProblem } from '../sdk/index.ts';
import { oauthFetch } from './transport.ts';

/** The CLI's built-in OAuth client (see docs/guides/oauth.md). */
export const CLIENT_ID = 'spaces-cli';
/** What the commands need: spaces and their versions, renames, team settings. */
export const SCOPES = 'spaces:read spaces:write spaces:rename publish:write teams:read teams:create';

/** A token endpoint answer that carries tokens. */
export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** Seconds the access token lives. */
  expiresIn?: number;
}

export function tokenSetOf(body: Record<string, unknown>): TokenSet | null {
  if (typeof body.access_token !== 'string') return null;
  return {
    accessToken: body.access_token,
    ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
    ...(typeof body.expires_in === 'number' ? { expiresIn: body.expires_in } : {}),
  };
}

/** An OAuth error answer (`{error, error_description}`) as a problem the CLI prints and maps to an exit code. */
export function oauthProblem(
  status: number,
  body: { error?: unknown; error_description?: unknown },
  what: string,
): SpacesProblem {
  return new SpacesProblem({
    type: 'about:blank',
    title: 'Login failed',
    status,
    code: typeof body.error === 'string' ? body.error : 'login_failed',
    detail:
      typeof body.error_description === 'string' ? body.error_description : `${what} answered ${status}.`,
    requestId: '',
    suggestions: ['Try again, or log in with an API key: `spaces login --token <key>`.'],
  });
}

/** POSTs form parameters to an OAuth endpoint (they answer in OAuth's JSON, not problem documents). */
export async function postForm(
  url: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  // An unreachable server: the SDK's transport throws the `network_error` problem.
  const res = await oauthFetch()(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body };
}
