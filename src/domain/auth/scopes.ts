/** The OAuth 2.0 scopes of the interface, exactly as listed there. */
export const SCOPES = [
  'teams:read',
  'teams:create',
  'spaces:read',
  'spaces:write',
  'spaces:rename',
  'publish:write',
  'domains:read',
  'domains:write',
  'spaces:publish',
  'builds:trigger',
  'offline_access',
] as const;
export type Scope = (typeof SCOPES)[number];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'teams:read': 'Read the teams your account belongs to',
  'teams:create': 'Create teams',
  'spaces:read': 'Read spaces, versions and build status',
  'spaces:write': 'Create and update spaces and their settings',
  'spaces:rename': 'Rename space slugs and managed addresses',
  'publish:write': 'Publish new immutable versions',
  'domains:read': 'Read domain inventory and DNS diagnostics',
  'domains:write': 'Attach, verify and change domains and DNS records',
  'spaces:publish': 'Publish a version to an existing space',
  'builds:trigger': 'Start a build for an existing version',
  offline_access: 'Keep access without signing in again (refresh tokens)',
};

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

/** Every scope but `offline_access`, which only the authorization-code flow can grant. */
export const ALL_API_SCOPES: Scope[] = SCOPES.filter((s) => s !== 'offline_access');

/** API-key presets: named sets of the same scopes OAuth tokens carry, so both are checked alike. */
export const API_KEY_PRESETS = {
  ci_deploy: ['spaces:read', 'publish:write', 'spaces:publish', 'builds:trigger'],
  space_publisher: ['spaces:read', 'spaces:write', 'publish:write', 'spaces:publish'],
  space_admin: [
    'teams:read',
    'spaces:read',
    'spaces:write',
    'spaces:rename',
    'publish:write',
    'spaces:publish',
    'builds:trigger',
    'domains:read',
  ],
  domain_manager: ['spaces:read', 'domains:read', 'domains:write'],
  team_admin: ALL_API_SCOPES,
} as const satisfies Record<string, readonly Scope[]>;
export type ApiKeyPreset = keyof typeof API_KEY_PRESETS;
export const API_KEY_PRESET_NAMES = Object.keys(API_KEY_PRESETS) as ApiKeyPreset[];
