import type { AppRow } from '../../domain/oauth/service.ts';

export function presentOAuthApp(app: AppRow) {
  return {
    id: app.id,
    clientId: app.id,
    teamId: app.team_id,
    name: app.name,
    type: app.client_type as 'confidential' | 'public',
    redirectUris: JSON.parse(app.redirect_uris) as string[],
    scopes: JSON.parse(app.scopes) as string[],
    secretHint: app.secret_hint,
    createdAt: app.created_at,
    updatedAt: app.updated_at,
  };
}
