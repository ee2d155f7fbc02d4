export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3 };

export function atLeast(role: Role, min: Role): boolean {
  return RANK[role] >= RANK[min];
}

/**
 * The team permission matrix (also in docs/guides/teams.md):
 *
 * | action                                   | owner | admin | member |
 * |------------------------------------------|-------|-------|--------|
 * | read the team, its members, its spaces   |  yes  |  yes  |  yes   |
 * | create spaces, publish, manage spaces    |  yes  |  yes  |  yes   |
 * | create API keys for the team             |  yes  |  yes  |  yes   |
 * | update team settings (name, slug, …)     |  yes  |  yes  |  no    |
 * | invite, list and cancel invitations      |  yes  |  yes  |  no    |
 * | change roles / remove admins and members |  yes  |  yes  |  no    |
 * | grant or revoke the owner role           |  yes  |  no   |  no    |
 * | remove an owner, delete the team         |  yes  |  no   |  no    |
 *
 * Anyone may leave a team (remove themselves) unless they are its last owner.
 */
export const PERMISSIONS = {
  'team.read': 'member',
  'space.manage': 'member',
  'team.update': 'admin',
  'members.manage': 'admin',
  'owners.manage': 'owner',
  'team.delete': 'owner',
} as const satisfies Record<string, Role>;
export type Permission = keyof typeof PERMISSIONS;

export function can(role: Role, permission: Permission): boolean {
  return atLeast(role, PERMISSIONS[permission]);
}
