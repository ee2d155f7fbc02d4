import type { MailMessage } from '../mail/model.ts';

/** The e-mails of people and access requests. Plain text: links are the whole point of them. */

export function personInvitationMail(input: {
  tenantId: string;
  to: string;
  spaceName: string;
  inviterName: string | null;
  role: string;
  link: string;
  expiresAt: string;
  note?: string | null;
}): MailMessage {
  const who = input.inviterName ? `${input.inviterName} shared` : 'You were given access to';
  return {
    tenantId: input.tenantId,
    kind: 'space_invitation',
    to: input.to,
    subject: input.inviterName ? `${who} ${input.spaceName} with you` : `${who} ${input.spaceName}`,
    text: [
      `${input.inviterName ? `${who} the site "${input.spaceName}" with you` : `${who} the site "${input.spaceName}"`} (${input.role}).`,
      ...(input.note ? ['', input.note] : []),
      '',
      'Open it with this link (it signs you in to this site only; no account needed):',
      input.link,
      '',
      `The link works until ${new Date(input.expiresAt).toUTCString()}. Do not forward it: whoever opens it is signed in as you.`,
    ].join('\n'),
  };
}

export function requestVerificationMail(input: {
  tenantId: string;
  to: string;
  spaceName: string;
  link: string;
}): MailMessage {
  return {
    tenantId: input.tenantId,
    kind: 'access_request_verification',
    to: input.to,
    subject: `Confirm your request for access to ${input.spaceName}`,
    text: [
      `Someone (hopefully you) asked for access to the site "${input.spaceName}" with this address.`,
      '',
      'Confirm it with this link, and the site’s owners will see your request:',
      input.link,
      '',
      'If it was not you, ignore this e-mail: nothing is sent to the owners without it.',
    ].join('\n'),
  };
}
