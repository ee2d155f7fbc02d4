import type { MailMessage } from '../mail/model.ts';

/** The e-mail a team invitation sends: who invites, to which team, with which role, and where to accept. */
export function invitationMail(input: {
  tenantId: string;
  to: string;
  teamName: string;
  role: string;
  inviterName: string | null;
  expiresAt: string;
  /** The API origin; the dashboard answers at its root. */
  publicUrl: string;
  signupOpen: boolean;
}): MailMessage {
  const who = input.inviterName ? `${input.inviterName} invited you` : 'You are invited';
  const link = `${input.publicUrl.replace(/\/+$/, '')}/#/team`;
  const days = new Date(input.expiresAt).toUTCString();
  const account = input.signupOpen
    ? `Sign in (or sign up) as ${input.to} and accept it on the Team page:`
    : `Sign in as ${input.to} and accept it on the Team page (ask the server's owner for an account if you have none):`;
  return {
    tenantId: input.tenantId,
    kind: 'team_invitation',
    to: input.to,
    subject: `${who} to the team ${input.teamName} on Spaces`,
    text: [
      `${who} to join the team "${input.teamName}" on Spaces as ${input.role}.`,
      '',
      account,
      link,
      '',
      `The invitation expires on ${days}.`,
      '',
      'If you did not expect this invitation, you can ignore this e-mail.',
    ].join('\n'),
  };
}
