import type { Store } from '../../store/repos/index.ts';
import { isScope, SCOPES, type Scope } from '../auth/scopes.ts';
import { hashToken, sameDigest } from '../auth/tokens.ts';
import { OAuthError, oauthFail } from './errors.ts';
import { CLI_CLIENT_ID } from './lifetimes.ts';

export type ClientType = 'confidential' | 'public';

/** A client as the flows see it: a team's registered app or the built-in CLI. */
export interface OAuthClient {
  clientId: string;
  name: string;
  type: ClientType;
  scopes: readonly Scope[];
  redirectUris: readonly string[];
  teamId: string | null;
  tenantId: string | null;
  secretHash: string | null;
  builtIn: boolean;
}

export const CLI_CLIENT: OAuthClient = {
  clientId: CLI_CLIENT_ID,
  name: 'Spaces CLI',
  type: 'public',
  scopes: SCOPES,
  redirectUris: ['http://127.0.0.1/callback'],
  teamId: null,
  tenantId: null,
  secretHash: null,
  builtIn: true,
};

/** RFC 8252 §7.3: the CLI's loopback redirect may use any port; nothing else may vary. */
const CLI_REDIRECT = /^http:\/\/127\.0\.0\.1(?::([1-9][0-9]{0,4}))?\/callback$/;

export const MAX_REDIRECT_URIS = 10;

/** Why a redirect URI can't be registered, or null when it can. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > 2000) return 'is longer than 2000 characters';
  if (/[\s<>"\\]/.test(uri)) return 'contains spaces or characters that are not allowed in a URL';
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (uri.includes('#')) return 'has a fragment';
  if (u.username || u.password) return 'carries user information (user@host)';
  if (u.protocol === 'https:') return u.hostname ? null : 'has no host';
  if (u.protocol === 'http:') {
    const h = u.hostname;
    return h === '127.0.0.1' || h === '[::1]' || h === 'localhost'
      ? null
      : 'uses http on a host other than a loopback address';
  }
  // Private-use URI scheme of a native app (RFC 8252 §7.1): reverse domain name, e.g. com.example.app:/cb
  if (/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(u.protocol)) return null;
  return 'uses a scheme other than https, loopback http or a private-use (reverse domain) scheme';
}

export function parseScopeParam(raw: string | undefined): Scope[] | null | 'invalid' {
  if (raw === undefined || raw.trim() === '') return null;
  const out: Scope[] = [];
  for (const s of raw.trim().split(/ +/)) {
    if (!isScope(s)) return 'invalid';
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

/**
 * The clients of the authorization server: a team's registered apps and the built-in CLI. Finds
 * them, authenticates them (secrets compared as digests, in constant time) and decides which
 * scopes a request ends up with.
 */
export class OAuthClients {
  constructor(private readonly store: Store) {}

  /** The name of the team that registered a client, for the consent pages; null for the CLI. */
  async publisherName(client: OAuthClient): Promise<string | null> {
    if (!client.teamId) return null;
    const team = await this.store.repos.teams.byId(client.teamId);
    return team?.name ?? null;
  }

  async find(clientId: string): Promise<OAuthClient | null> {
    if (clientId === CLI_CLIENT_ID) return CLI_CLIENT;
    const app = await this.store.repos.oauthApps.byId(clientId);
    if (!app) return null;
    return {
      clientId: app.id,
      name: app.name,
      type: app.client_type as ClientType,
      scopes: (JSON.parse(app.scopes) as string[]).filter(isScope),
      redirectUris: JSON.parse(app.redirect_uris) as string[],
      teamId: app.team_id,
      tenantId: app.tenant_id,
      secretHash: app.secret_hash,
      builtIn: false,
    };
  }

  /** Exact string match (RFC 9700 §4.1.3); only the built-in CLI may vary its loopback port. */
  redirectAllowed(client: OAuthClient, uri: string): boolean {
    if (client.builtIn) return CLI_REDIRECT.test(uri) && Number(CLI_REDIRECT.exec(uri)![1] ?? 80) <= 65535;
    return client.redirectUris.includes(uri);
  }

  /**
   * Client authentication at the token, device, revocation and introspection endpoints:
   * `client_secret_basic`, `client_secret_post`, or `none` (a public client naming its client_id).
   */
  async authenticate(
    basic: { id: string; secret: string } | null,
    body: { client_id?: string; client_secret?: string },
    opts: { requireConfidential?: boolean } = {},
  ): Promise<OAuthClient> {
    if (basic && body.client_secret !== undefined) {
      oauthFail('invalid_request', 'Use one client authentication method, not Basic and client_secret both.');
    }
    if (basic && body.client_id !== undefined && body.client_id !== basic.id) {
      oauthFail('invalid_request', 'client_id in the body differs from the Basic credentials.');
    }
    const clientId = basic?.id ?? body.client_id;
    const secret = basic?.secret ?? body.client_secret;
    const invalid = () =>
      new OAuthError('invalid_client', 'Client authentication failed.', { basicChallenge: basic !== null });
    if (!clientId) throw invalid();
    const client = await this.find(clientId);
    if (!client) throw invalid();
    if (client.type === 'confidential') {
      if (secret === undefined || !client.secretHash || !sameDigest(client.secretHash, hashToken(secret))) {
        throw invalid();
      }
    } else if (secret !== undefined) {
      throw invalid(); // public clients have no secret
    }
    if (opts.requireConfidential && client.type !== 'confidential') {
      throw new OAuthError('unauthorized_client', 'Only confidential clients may use this.');
    }
    return client;
  }

  /** The scopes a request ends up with: asked ∩ allowed, or an error; default = the client's scopes. */
  grantScopes(
    client: OAuthClient,
    raw: string | undefined,
    flow: 'authorization_code' | 'device' | 'client_credentials',
  ): Scope[] {
    const asked = parseScopeParam(raw);
    if (asked === 'invalid') oauthFail('invalid_scope', 'The scope parameter names an unknown scope.');
    const allowed = client.scopes.filter((s) => flow === 'authorization_code' || s !== 'offline_access');
    if (asked === null) {
      const defaults = allowed.filter((s) => s !== 'offline_access');
      if (defaults.length === 0)
        oauthFail('invalid_scope', 'Name the scopes to grant in the scope parameter.');
      return defaults;
    }
    if (flow !== 'authorization_code' && asked.includes('offline_access')) {
      oauthFail('invalid_scope', 'offline_access is only granted in the authorization-code flow.');
    }
    const extra = asked.filter((s) => !client.scopes.includes(s));
    if (extra.length > 0) oauthFail('invalid_scope', `The client may not ask for: ${extra.join(' ')}.`);
    return asked;
  }
}
