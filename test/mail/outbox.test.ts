import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * The mail outbox end to end: a team invitation writes its e-mail in the invitation's transaction,
 * the `mail.send` job delivers it to a real SMTP server (the `smtp-server` package, started here),
 * a temporary refusal is retried, the body is dropped once sent, a refused invitation sends nothing,
 * and without SMTP the default sender writes `.eml` files under the data dir.
 */

async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeEachDb('mail outbox over SMTP', (db) => {
  let sink: SmtpSink;
  let t: TestServer;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startServer({
      db,
      env: {
        SPACES_MAIL: sink.url,
        SPACES_MAIL_FROM: 'Spaces Test <spaces@example.test>',
        SPACES_JOB_POLL_MS: '50',
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  it('e-mails a team invitation through SMTP, with the team, the role and the link', async () => {
    const owner = await createUser(t, 'Ada');
    const to = `invitee-${Date.now()}@example.test`;
    const inv = await t.api('POST', `/v1/teams/${owner.teamId}/invitations`, {
      token: owner.token,
      body: { email: to, role: 'member' },
    });
    expect(inv.status).toBe(201);
    const mail = await sink.next((m) => m.to.includes(to));
    expect(mail.from).toBe('spaces@example.test');
    expect(mail.parsed.subject).toContain('Ada invited you');
    expect(mail.parsed.text).toContain('as member');
    expect(mail.parsed.text).toContain(`${t.server.services.config.publicUrl}/#/team`);
    expect(mail.parsed.messageId).toMatch(/^<mail_[0-9a-z]+@spaces>$/);

    // Sent: the row keeps who and when, not the body.
    const mailId = mail.parsed.messageId!.slice(1).split('@')[0]!;
    const row = await waitFor(async () => {
      const r = await t.server.services.store.repos.mailOutbox.byId(mailId);
      return r?.status === 'sent' ? r : null;
    });
    expect(row.to_address).toBe(to);
    expect(row.text_body).toBeNull();
    expect(row.attempts).toBe(1);
    expect(sink.received.filter((m) => m.to.includes(to))).toHaveLength(1);
  });

  it('retries a message the server refused for now, and sends it once', async () => {
    const owner = await createUser(t, 'retry');
    const to = `retry-${Date.now()}@example.test`;
    sink.refuseNext(1);
    const inv = await t.api('POST', `/v1/teams/${owner.teamId}/invitations`, {
      token: owner.token,
      body: { email: to, role: 'admin' },
    });
    expect(inv.status).toBe(201);
    // The queue backs off 5 s before the second attempt.
    const mail = await sink.next((m) => m.to.includes(to), 25_000);
    expect(mail.parsed.text).toContain('as admin');
    const mailId = mail.parsed.messageId!.slice(1).split('@')[0]!;
    const row = await waitFor(async () => {
      const r = await t.server.services.store.repos.mailOutbox.byId(mailId);
      return r?.status === 'sent' ? r : null;
    });
    expect(row.attempts).toBe(2);
    expect(row.last_error).toBeNull();
    expect(sink.received.filter((m) => m.to.includes(to))).toHaveLength(1);
  }, 40_000);

  it('sends nothing for an invitation that was refused', async () => {
    const owner = await createUser(t, 'dup');
    const to = `dup-${Date.now()}@example.test`;
    const first = await t.api('POST', `/v1/teams/${owner.teamId}/invitations`, {
      token: owner.token,
      body: { email: to, role: 'member' },
    });
    expect(first.status).toBe(201);
    await sink.next((m) => m.to.includes(to));
    const again = await t.api('POST', `/v1/teams/${owner.teamId}/invitations`, {
      token: owner.token,
      body: { email: to, role: 'member' },
    });
    expectProblem(again, 409, 'invitation_already_exists');
    const rows = await t.server.services.store.repos.mailOutbox.listTo(
      t.server.services.mainTenantId,
      to,
      10,
    );
    expect(rows).toHaveLength(1);
  });

  it('resends a pending invitation with a fresh week, and refuses a canceled one', async () => {
    const owner = await createUser(t, 'resend');
    const to = `resend-${Date.now()}@example.test`;
    const inv = await t.api('POST', `/v1/teams/${owner.teamId}/invitations`, {
      token: owner.token,
      body: { email: to, role: 'member' },
    });
    await sink.next((m) => m.to.includes(to));
    const again = await t.api('POST', `/v1/teams/${owner.teamId}/invitations/${inv.body.data.id}/resend`, {
      token: owner.token,
    });
    expect(again.status).toBe(200);
    expect(Date.parse(again.body.data.expiresAt)).toBeGreaterThanOrEqual(Date.parse(inv.body.data.expiresAt));
    await waitFor(async () => sink.received.filter((m) => m.to.includes(to)).length === 2);
    // Another team's owner cannot resend it.
    const stranger = await createUser(t, 'stranger');
    const foreign = await t.api('POST', `/v1/teams/${owner.teamId}/invitations/${inv.body.data.id}/resend`, {
      token: stranger.token,
    });
    expect(foreign.status).toBe(404);
    await t.api('DELETE', `/v1/teams/${owner.teamId}/invitations/${inv.body.data.id}`, {
      token: owner.token,
    });
    const canceled = await t.api('POST', `/v1/teams/${owner.teamId}/invitations/${inv.body.data.id}/resend`, {
      token: owner.token,
    });
    expectProblem(canceled, 409, 'invitation_not_pending');
    expect(sink.received.filter((m) => m.to.includes(to))).toHaveLength(2);
  });

  it('keeps a header on one line whatever the team is called', async () => {
    const owner = await createUser(t, 'hdr');
    const team = await t.api('POST', '/v1/teams', {
      token: owner.token,
      body: { name: 'Evil\r\nBcc: victim@example.test' },
    });
    expect(team.status).toBe(201);
    const to = `hdr-${Date.now()}@example.test`;
    await t.api('POST', `/v1/teams/${team.body.data.id}/invitations`, {
      token: owner.token,
      body: { email: to, role: 'member' },
    });
    const mail = await sink.next((m) => m.to.includes(to));
    expect(mail.to).toEqual([to]);
    expect(mail.parsed.bcc).toBeUndefined();
    expect(mail.parsed.subject).not.toMatch(/[\r\n]/);
  });
});

describe('mail outbox, default file sender', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ env: { SPACES_JOB_POLL_MS: '50' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('writes each message as an .eml file under <data dir>/mail', async () => {
    const owner = await createUser(t, 'Filer');
    const to = `file-${Date.now()}@example.test`;
    const inv = await t.api('POST', `/v1/teams/${owner.teamId}/invitations`, {
      token: owner.token,
      body: { email: to, role: 'member' },
    });
    expect(inv.status).toBe(201);
    const dir = path.join(t.dataDir, 'mail');
    const file = await waitFor(async () => {
      const names = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.eml')) : [];
      for (const n of names) {
        const text = fs.readFileSync(path.join(dir, n), 'utf8');
        if (text.includes(`To: ${to}`)) return text;
      }
      return null;
    });
    expect(file).toMatch(/^Subject: Filer invited you to the team/m);
    expect(file).toContain(`${t.server.services.config.publicUrl}/#/team`);
    expect((fs.statSync(dir).mode & 0o777).toString(8)).toBe('700');
  });
});
