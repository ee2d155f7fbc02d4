import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type CertificateRow = DB['certificates'];

/** Certificates by hostname (A-labels), and the HTTP-01 answers of open ACME orders. */
export class CertificateRepository {
  constructor(private readonly ctx: RepoContext) {}

  async byHostname(hostname: string): Promise<CertificateRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('certificates')
        .selectAll()
        .where('hostname', '=', hostname)
        .executeTakeFirst()) ?? null
    );
  }

  /** Every issued certificate. */
  listIssued(): Promise<CertificateRow[]> {
    return this.ctx.exec.selectFrom('certificates').selectAll().where('status', '=', 'issued').execute();
  }

  /**
   * The issued certificates to present (the TLS listener's SNI map): those of hostnames a verified
   * domain names, and `extra` (the base domain's). A removed domain's, or one that lost control,
   * is no longer presented.
   */
  listInService(extra: readonly string[]): Promise<CertificateRow[]> {
    return this.ctx.exec
      .selectFrom('certificates')
      .selectAll()
      .where('status', '=', 'issued')
      .where((eb) =>
        eb.or([
          eb(
            'hostname',
            'in',
            eb.selectFrom('domains').select('domains.hostname').where('domains.status', '=', 'verified'),
          ),
          ...(extra.length ? [eb('hostname', 'in', extra)] : []),
        ]),
      )
      .execute();
  }

  /**
   * Hostnames of verified domains (wildcards only with `wildcards`) whose certificate is missing, due
   * for renewal, or due for another attempt, at `now`. A hostname several teams hold comes once.
   */
  async hostnamesDue(now: string, n: number, wildcards: boolean): Promise<string[]> {
    let q = this.ctx.exec
      .selectFrom('domains')
      .leftJoin('certificates', 'certificates.hostname', 'domains.hostname')
      .select('domains.hostname')
      .distinct()
      .where('domains.status', '=', 'verified');
    if (!wildcards) q = q.where('domains.hostname', 'not like', '*.%');
    const rows = await q
      .where((eb) =>
        eb.or([
          eb('certificates.hostname', 'is', null),
          eb.and([eb('certificates.status', '=', 'issued'), eb('certificates.renew_after', '<=', now)]),
          eb.and([eb('certificates.status', '!=', 'issued'), eb('certificates.next_attempt_at', '<=', now)]),
        ]),
      )
      .orderBy('domains.hostname')
      .limit(n)
      .execute();
    return rows.map((r) => r.hostname);
  }

  /** Whether a certificate not tied to a domain row (the base domain's) is missing or due at `now`. */
  async isDue(hostname: string, now: string): Promise<boolean> {
    const row = await this.byHostname(hostname);
    if (!row) return true;
    const at = row.status === 'issued' ? row.renew_after : row.next_attempt_at;
    return at !== null && at <= now;
  }

  async upsert(row: CertificateRow): Promise<void> {
    await this.ctx.exec
      .insertInto('certificates')
      .values(row)
      .onConflict((oc) => oc.column('hostname').doUpdateSet({ ...row }))
      .execute();
  }

  /** Records a failed attempt; an issued certificate stays in service. */
  async recordFailure(hostname: string, error: string, nextAttemptAt: string, at: string): Promise<void> {
    const existing = await this.byHostname(hostname);
    if (!existing) {
      await this.ctx.exec
        .insertInto('certificates')
        .values({
          hostname,
          status: 'failed',
          cert_pem: null,
          key_sealed: null,
          not_before: null,
          not_after: null,
          renew_after: null,
          last_error: error,
          attempts: 1,
          next_attempt_at: nextAttemptAt,
          created_at: at,
          updated_at: at,
        })
        .execute();
      return;
    }
    await this.ctx.exec
      .updateTable('certificates')
      .set({
        ...(existing.status === 'issued' ? {} : { status: 'failed' }),
        last_error: error,
        attempts: existing.attempts + 1,
        next_attempt_at: nextAttemptAt,
        // An issued certificate that failed to renew is tried again at the next attempt time.
        ...(existing.status === 'issued' ? { renew_after: nextAttemptAt } : {}),
        updated_at: at,
      })
      .where('hostname', '=', hostname)
      .execute();
  }

  /** Makes a certificate due now (`ssl/retry`). */
  async retryNow(hostname: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('certificates')
      .set({ next_attempt_at: at, updated_at: at })
      .where('hostname', '=', hostname)
      .where('status', '!=', 'issued')
      .execute();
  }

  async putChallenge(
    token: string,
    keyAuthorization: string,
    hostname: string,
    expiresAt: string,
  ): Promise<void> {
    await this.ctx.exec
      .insertInto('acme_challenges')
      .values({ token, key_authorization: keyAuthorization, hostname, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .column('token')
          .doUpdateSet({ key_authorization: keyAuthorization, hostname, expires_at: expiresAt }),
      )
      .execute();
  }

  async challenge(token: string, now: string): Promise<string | null> {
    const row = await this.ctx.exec
      .selectFrom('acme_challenges')
      .select('key_authorization')
      .where('token', '=', token)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row?.key_authorization ?? null;
  }

  async deleteChallenge(token: string): Promise<void> {
    await this.ctx.exec.deleteFrom('acme_challenges').where('token', '=', token).execute();
  }
}
