import type { CodeTable } from '../catalog.ts';

export const teamCodes = {
  team_slug_conflict: {
    status: 409,
    summary: 'Another team in this tenant already uses the slug.',
    suggestions: [
      'Choose another slug, or leave `slug` out: the server derives one from the name and adds the lowest free `-2`, `-3`, … suffix.',
    ],
    next: [
      'curl -s -X POST "$SPACES_API_URL/v1/teams" -H "Authorization: Bearer $SPACES_TOKEN" -H "content-type: application/json" -d \'{"name":"Acme"}\'',
    ],
  },
  team_required: {
    status: 400,
    summary: 'The operation needs a team, and none was given or implied by the credential.',
    suggestions: ['Name the team (id or slug) in the request, or use an API key, which belongs to one team.'],
    next: ['curl -s -H "Authorization: Bearer $SPACES_TOKEN" "$SPACES_API_URL/v1/teams"'],
  },
  last_owner: {
    status: 409,
    summary: 'A team must keep at least one owner; promote someone else first.',
    suggestions: [
      'Make another member an owner first (`PATCH /v1/teams/{teamId}/members/{userId}` with `{"role":"owner"}`), then change or remove this one.',
    ],
    next: [
      'curl -s -X PATCH "$SPACES_API_URL/v1/teams/$SPACES_TEAM/members/<userId>" -H "Authorization: Bearer $SPACES_TOKEN" -H "content-type: application/json" -d \'{"role":"owner"}\'',
    ],
  },
  member_already_exists: {
    status: 409,
    summary: 'The person is a member of the team already.',
    suggestions: ['Change their role instead of inviting them again.'],
    next: [
      'curl -s -H "Authorization: Bearer $SPACES_TOKEN" "$SPACES_API_URL/v1/teams/$SPACES_TEAM/members"',
    ],
  },
  invitation_already_exists: {
    status: 409,
    summary: 'A pending invitation for this e-mail address exists already.',
    suggestions: ['Use the pending invitation, or cancel it and invite again.'],
    next: [
      'curl -s -H "Authorization: Bearer $SPACES_TOKEN" "$SPACES_API_URL/v1/teams/$SPACES_TEAM/invitations"',
    ],
  },
  invitation_email_mismatch: {
    status: 403,
    summary: 'The invitation was sent to another e-mail address than the signed-in account’s.',
    suggestions: ['Sign in with the invited address, or ask for an invitation to your own address.'],
  },
  invitation_not_pending: {
    status: 409,
    summary: 'The invitation was accepted, canceled or has expired.',
    suggestions: ['Ask a team owner or admin for a new invitation.'],
  },
  invitation_expired: {
    status: 410,
    summary: 'The invitation is past its expiry; ask for a new one.',
    suggestions: ['Ask a team owner or admin for a new invitation.'],
  },
  policy_exceeds_grantor: {
    status: 403,
    summary: 'A credential cannot be given more rights than the one creating it has.',
    suggestions: [
      'Pick a preset whose scopes your own credential holds, or create the key while signed in (a session holds every scope).',
    ],
  },
} satisfies CodeTable;
