import type { CodeTable } from '../catalog.ts';

/** People of a space and access requests (behaviour §3.4). */
export const peopleCodes = {
  space_person_not_found: {
    status: 404,
    summary: 'No person with that id in this space (or they were removed).',
  },
  space_person_already_member: {
    status: 409,
    summary:
      'That address belongs to someone who already has access to this space: change their grants instead.',
  },
  space_person_invitation_pending: {
    status: 409,
    summary: 'That address was invited already and has not signed in yet: resend the invitation instead.',
  },
  space_person_self_invite: {
    status: 422,
    summary: 'You cannot invite your own address to a space you manage.',
  },
  access_request_not_found: { status: 404, summary: 'No access request with that id in this space.' },
  access_request_not_pending: {
    status: 409,
    summary: 'The request was approved or denied already (or its address was never confirmed).',
  },
} satisfies CodeTable;
