import type { Static } from '@sinclair/typebox';
import type { ApiKeyRow, UserRow } from '../../domain/accounts/service.ts';
import type { ApiKey, User } from '../../schemas/account.ts';

export function presentUser(u: UserRow): Static<typeof User> {
  return { id: u.id, email: u.email, name: u.name, isAdmin: u.is_admin === 1, createdAt: u.created_at };
}

export function presentApiKey(k: ApiKeyRow): Static<typeof ApiKey> {
  return {
    id: k.id,
    name: k.name,
    teamId: k.team_id,
    spaceId: k.space_id,
    preset: k.preset,
    scopes: JSON.parse(k.scopes),
    hint: k.hint,
    createdAt: k.created_at,
    expiresAt: k.expires_at,
    lastUsedAt: k.last_used_at,
    revokedAt: k.revoked_at,
  };
}
