import type { CodeTable } from '../catalog.ts';

export const teamCodes = {
  team_slug_conflict: { status: 409, summary: 'Another team in this tenant already uses the slug.' },
  team_required: {
    status: 400,
    summary: 'The operation needs a team, and none was given or implied by the credential.',
  },
  last_owner: { status: 409, summary: 'A team must keep at least one owner; promote someone else first.' },
  member_already_exists: { status: 409, summary: 'The person is a member of the team already.' },
  invitation_already_exists: {
    status: 409,
    summary: 'A pending invitation for this e-mail address exists already.',
  },
  invitation_email_mismatch: {
    status: 403,
    summary: 'The invitation was sent to another e-mail address than the signed-in account’s.',
  },
  invitation_not_pending: { status: 409, summary: 'The invitation was accepted, canceled or has expired.' },
  invitation_expired: { status: 410, summary: 'The invitation is past its expiry; ask for a new one.' },
  policy_exceeds_grantor: {
    status: 403,
    summary: 'A credential cannot be given more rights than the one creating it has.',
  },
} satisfies CodeTable;
