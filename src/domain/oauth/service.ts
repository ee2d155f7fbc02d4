import type { Clock } from '../../clock.ts';
import type { Store } from '../../store/repos/index.ts';
import type { TeamService } from '../teams/service.ts';
import { OAuthApps } from './apps.ts';
import { OAuthClients } from './clients.ts';
import { AuthorizationCodes } from './codes.ts';
import { DeviceFlow } from './device.ts';
import { OAuthTokens } from './tokens.ts';

export { type AppRow, OAuthApps } from './apps.ts';
export {
  CLI_CLIENT,
  type ClientType,
  MAX_REDIRECT_URIS,
  type OAuthClient,
  OAuthClients,
  parseScopeParam,
  redirectUriProblem,
} from './clients.ts';
export { AuthorizationCodes, type AuthorizeRequest } from './codes.ts';
export { DeviceFlow, type DeviceView, formatUserCode, normalizeUserCode } from './device.ts';
export { type Grant, OAuthTokens, type TokenResponse } from './tokens.ts';

/**
 * The authorization server, as collaborators sharing the identity repositories: `clients` (find and
 * authenticate clients, grant scopes), `apps` (a team's registered apps), `codes` (authorization
 * code + PKCE), `tokens` (issue, refresh, revoke, introspect, resolve) and `device` (RFC 8628).
 * Everything is stored hashed; every lookup compares digests in constant time.
 */
export class OAuthService {
  readonly clients: OAuthClients;
  readonly apps: OAuthApps;
  readonly tokens: OAuthTokens;
  readonly codes: AuthorizationCodes;
  readonly device: DeviceFlow;

  constructor(
    store: Store,
    clock: Clock,
    teams: TeamService,
    /** Key of the HTML pages' CSRF tokens (a server secret shared by every instance). */
    readonly csrfKey: Buffer,
  ) {
    this.clients = new OAuthClients(store);
    this.apps = new OAuthApps(store, clock, teams);
    this.tokens = new OAuthTokens(store, clock, this.clients);
    this.codes = new AuthorizationCodes(store, clock, this.clients, this.tokens);
    this.device = new DeviceFlow(store, clock, this.clients, this.tokens);
  }
}
