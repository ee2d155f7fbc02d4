import { ApiKeyRepository } from './identity/api-keys.ts';
import { MetaRepository } from './identity/meta.ts';
import { OAuthAppRepository } from './identity/oauth-apps.ts';
import { OAuthCodeRepository } from './identity/oauth-codes.ts';
import { OAuthDeviceCodeRepository } from './identity/oauth-device-codes.ts';
import { OAuthTokenRepository } from './identity/oauth-tokens.ts';
import { SessionRepository } from './identity/sessions.ts';
import { TeamInvitationRepository } from './identity/team-invitations.ts';
import { TeamMemberRepository } from './identity/team-members.ts';
import { TeamRepository } from './identity/teams.ts';
import { TenantRepository } from './identity/tenants.ts';
import { UserRepository } from './identity/users.ts';
import type { RepoContext } from './index.ts';

/**
 * The identity group's repositories (see index.ts): tenants and server settings, people and their
 * credentials (sessions, API keys), teams with members and invitations, and the OAuth server's
 * apps, codes, tokens and device requests.
 */
export interface IdentityRepos {
  meta: MetaRepository;
  tenants: TenantRepository;
  users: UserRepository;
  sessions: SessionRepository;
  apiKeys: ApiKeyRepository;
  teams: TeamRepository;
  teamMembers: TeamMemberRepository;
  teamInvitations: TeamInvitationRepository;
  oauthApps: OAuthAppRepository;
  oauthCodes: OAuthCodeRepository;
  oauthTokens: OAuthTokenRepository;
  oauthDeviceCodes: OAuthDeviceCodeRepository;
}

export function identityRepos(ctx: RepoContext): IdentityRepos {
  return {
    meta: new MetaRepository(ctx),
    tenants: new TenantRepository(ctx),
    users: new UserRepository(ctx),
    sessions: new SessionRepository(ctx),
    apiKeys: new ApiKeyRepository(ctx),
    teams: new TeamRepository(ctx),
    teamMembers: new TeamMemberRepository(ctx),
    teamInvitations: new TeamInvitationRepository(ctx),
    oauthApps: new OAuthAppRepository(ctx),
    oauthCodes: new OAuthCodeRepository(ctx),
    oauthTokens: new OAuthTokenRepository(ctx),
    oauthDeviceCodes: new OAuthDeviceCodeRepository(ctx),
  };
}
