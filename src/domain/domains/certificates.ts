import fs from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { CertificateRow } from '../../store/repos/domains/certificates.ts';
import type { Store } from '../../store/repos/index.ts';
import type { SecretBox } from '../publishing/secrets.ts';
import { challengeTarget, type DnsProvider } from './dns-provider.ts';
import { dnsProviderFromConfig } from './rfc2136.ts';

type Acme = typeof import('acme-client');
type Log = { info(o: object, m: string): void; warn(o: object, m: string): void };

const MINUTE = 60_000;
/** An HTTP-01 answer lives this long (an order is finished or abandoned well within it). */
const CHALLENGE_TTL_MS = 30 * MINUTE;

/** After `attempts` failures in a row: 5 min, doubling, at most 6 h. */
export function retryDelayMs(attempts: number): number {
  return Math.min(6 * 60 * MINUTE, 5 * MINUTE * 2 ** Math.max(0, attempts - 1));
}

/** Two thirds into a certificate's lifetime: when the renewal job replaces it. */
export function renewAfter(notBefore: Date, notAfter: Date): Date {
  return new Date(notBefore.getTime() + ((notAfter.getTime() - notBefore.getTime()) * 2) / 3);
}

/**
 * Certificates for verified custom domains from an ACME CA (`SPACES_ACME_DIRECTORY`: Let's Encrypt by
 * default, its staging or a private CA such as pebble by URL), with HTTP-01 challenges answered by
 * every instance from the database, one ACME account per deployment (its key sealed in `meta`), and
 * each certificate's private key sealed with the secret key. Renewal starts two thirds into a
 * certificate's lifetime; failures back off from 5 minutes to 6 hours while an issued certificate
 * stays in service.
 *
 * Wildcards (`*.example.com`) are proved by DNS-01 instead, through the DNS provider port
 * (dns-provider.ts; RFC 2136 is the implementation that ships): the `_acme-challenge` TXT value is
 * written in the provider's zone, directly or behind the domain owner's CNAME. With a provider and no
 * `SPACES_TLS_CERT`, the base domain gets its own certificate the same way: `*.<base>` and `<base>`.
 *
 * The TLS listener asks {@link contextFor} for a hostname's SecureContext (an exact certificate, else
 * the wildcard of its parent); the map is rebuilt from the database after every issuance here and at
 * every job run, so other instances pick up a new certificate within a minute.
 */
export class CertificateService {
  /** hostname → its SecureContext, with the `updated_at` of the row it was made from. */
  private contexts = new Map<string, { updatedAt: string; context: tls.SecureContext }>();
  private acme: Acme | null = null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly box: SecretBox,
    private readonly log: Log,
    /** Where DNS-01 proofs are written; by default the one `SPACES_RFC2136_*` configure, if any. */
    private readonly dns01: DnsProvider | null = dnsProviderFromConfig(config),
  ) {}

  /** Whether this server obtains certificates at all (an HTTPS port is configured). */
  get enabled(): boolean {
    return this.config.httpsPort !== null;
  }

  /**
   * `*.<base domain>`, when this server obtains the base domain's certificate itself: a DNS-01
   * provider is configured and no certificate file is given. Null otherwise (or for a base domain
   * no public CA would certify, such as `localhost`).
   */
  get baseWildcard(): string | null {
    const base = this.config.baseDomain;
    if (!this.enabled || !this.dns01 || this.config.tlsCert) return null;
    if (!base.includes('.') || base.endsWith('.localhost')) return null;
    return `*.${base}`;
  }

  /** Whether `name` is the base domain or under it (its certificate is not a custom domain's). */
  private managed(name: string): boolean {
    const base = this.config.baseDomain;
    return name === base || name.endsWith(`.${base}`);
  }

  private async library(): Promise<Acme> {
    if (this.acme) return this.acme;
    const acme = (await import('acme-client')).default as unknown as Acme;
    if (this.config.acmeCaFile) {
      // Trust for a private ACME server's own TLS (pebble's), on top of the system store.
      const ca = [...tls.rootCertificates, fs.readFileSync(this.config.acmeCaFile, 'utf8')];
      acme.axios.defaults.httpsAgent = new https.Agent({ ca });
    }
    this.acme = acme;
    return acme;
  }

  /** The account key for this deployment: made once, sealed in `meta`, shared by every instance. */
  private async accountKey(acme: Acme): Promise<string> {
    const key = 'acme:account_key';
    const stored = await this.store.repos.meta.get(key);
    if (stored) return this.box.open(stored, key);
    const pem = (await acme.crypto.createPrivateKey()).toString();
    try {
      await this.store.repos.meta.insert(key, this.box.seal(pem, key));
    } catch {
      // Another instance stored one first: use that.
    }
    return this.box.open((await this.store.repos.meta.get(key))!, key);
  }

  /**
   * A client of the configured CA with this deployment's account. The account is registered once per
   * directory and its URL kept in `meta`: later orders don't register again (an "update" without
   * changes, which some CAs refuse).
   */
  private async client(acme: Acme) {
    const directoryUrl = this.config.acmeDirectory;
    const urlKey = `acme:account_url:${directoryUrl}`;
    const accountKey = await this.accountKey(acme);
    const known = await this.store.repos.meta.get(urlKey);
    if (known) return new acme.Client({ directoryUrl, accountKey, accountUrl: known });
    const client = new acme.Client({ directoryUrl, accountKey });
    await client.createAccount({
      termsOfServiceAgreed: true,
      ...(this.config.acmeEmail ? { contact: [`mailto:${this.config.acmeEmail}`] } : {}),
    });
    try {
      await this.store.repos.meta.insert(urlKey, client.getAccountUrl());
    } catch {
      // Another instance registered it first: the same key gives the same account.
    }
    return client;
  }

  /** The HTTP-01 answer for a token, for `/.well-known/acme-challenge/<token>` on any host. */
  challengeAnswer(token: string): Promise<string | null> {
    return this.store.repos.certificates.challenge(token, this.clock.now().toISOString());
  }

  /**
   * Obtains (or renews) the certificate of one hostname; records the failure and rethrows none. A
   * wildcard is proved by DNS-01 through the DNS provider; the base domain's wildcard covers the
   * base domain too; every other name by HTTP-01.
   */
  async issue(hostname: string): Promise<CertificateRow | null> {
    const acme = await this.library();
    const now = this.clock.now();
    try {
      const wildcard = hostname.startsWith('*.');
      const dns01 = this.dns01;
      if (wildcard && !dns01) {
        throw new Error(
          'A wildcard certificate needs DNS-01, and no DNS provider is configured (SPACES_RFC2136_*).',
        );
      }
      const client = await this.client(acme);
      const altNames = hostname === this.baseWildcard ? [hostname, this.config.baseDomain] : [hostname];
      const [keyPem, csr] = await acme.crypto.createCsr({ commonName: hostname, altNames });
      const repo = this.store.repos.certificates;
      const dnsName = (identifier: string) => challengeTarget(dns01!.zones, identifier).name;
      const cert = await client.auto({
        csr,
        email: this.config.acmeEmail ?? undefined,
        termsOfServiceAgreed: true,
        challengePriority: wildcard ? ['dns-01'] : ['http-01'],
        // acme-client's own pre-check asks the system resolver and port 80: never right here.
        skipChallengeVerification: true,
        challengeCreateFn: async (authz, challenge, keyAuthorization) => {
          if (challenge.type === 'dns-01') {
            await dns01!.addTxt(dnsName(authz.identifier.value), keyAuthorization);
            return;
          }
          const expires = new Date(this.clock.now().getTime() + CHALLENGE_TTL_MS).toISOString();
          await repo.putChallenge(challenge.token, keyAuthorization, hostname, expires);
        },
        challengeRemoveFn: async (authz, challenge, keyAuthorization) => {
          if (challenge.type === 'dns-01') {
            await dns01!.removeTxt(dnsName(authz.identifier.value), keyAuthorization);
            return;
          }
          await repo.deleteChallenge(challenge.token);
        },
      });
      const info = acme.crypto.readCertificateInfo(cert);
      const at = this.clock.now().toISOString();
      const previous = await repo.byHostname(hostname);
      const row: CertificateRow = {
        hostname,
        status: 'issued',
        cert_pem: cert,
        key_sealed: this.box.seal(keyPem.toString(), `certificate:${hostname}`),
        not_before: info.notBefore.toISOString(),
        not_after: info.notAfter.toISOString(),
        renew_after: renewAfter(info.notBefore, info.notAfter).toISOString(),
        last_error: null,
        attempts: 0,
        next_attempt_at: null,
        created_at: previous?.created_at ?? at,
        updated_at: at,
      };
      await repo.upsert(row);
      this.log.info({ hostname, notAfter: row.not_after }, 'certificate issued');
      await this.reload();
      return row;
    } catch (err) {
      const previous = await this.store.repos.certificates.byHostname(hostname);
      const attempts = (previous?.attempts ?? 0) + 1;
      const next = new Date(now.getTime() + retryDelayMs(attempts)).toISOString();
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn({ hostname, err: message, nextAttemptAt: next }, 'certificate not issued');
      await this.store.repos.certificates.recordFailure(
        hostname,
        message.slice(0, 2000),
        next,
        now.toISOString(),
      );
      return null;
    }
  }

  /** The job: certificates missing or due for renewal, for verified domains; then the SNI map. */
  async issueDue(): Promise<{ issued: number; failed: number }> {
    let issued = 0;
    let failed = 0;
    // Without an HTTPS listener nothing is issued, and there is no SNI map to keep.
    if (this.enabled) {
      const at = this.clock.now().toISOString();
      // Wildcards are due only when there is a DNS-01 provider to prove them with.
      const due = await this.store.repos.certificates.hostnamesDue(at, 20, this.dns01 !== null);
      const base = this.baseWildcard;
      if (base && (await this.store.repos.certificates.isDue(base, at))) due.unshift(base);
      for (const hostname of due) {
        if (await this.issue(hostname)) issued++;
        else failed++;
      }
      // Certificates issued or renewed by other instances reach this one's SNI map here.
      await this.reload();
    }
    return { issued, failed };
  }

  /**
   * Brings the hostname → SecureContext map up to the issued certificates of verified domains (and
   * the base domain's). A context is made (and its sealed key opened) only for a certificate new or
   * changed since the last reload.
   */
  async reload(): Promise<void> {
    const next = new Map<string, { updatedAt: string; context: tls.SecureContext }>();
    const base = this.baseWildcard;
    // The base domain's certificate is used only while this server still obtains it.
    for (const row of await this.store.repos.certificates.listInService(base ? [base] : [])) {
      if (!row.cert_pem || !row.key_sealed) continue;
      let entry = this.contexts.get(row.hostname);
      if (entry?.updatedAt !== row.updated_at) {
        try {
          const key = this.box.open(row.key_sealed, `certificate:${row.hostname}`);
          entry = {
            updatedAt: row.updated_at,
            context: tls.createSecureContext({ cert: row.cert_pem, key }),
          };
        } catch (err) {
          this.log.warn({ hostname: row.hostname, err: String(err) }, 'certificate could not be loaded');
          continue;
        }
      }
      next.set(row.hostname, entry);
    }
    // `*.<base>` covers the base domain itself too.
    const baseEntry = base ? next.get(base) : undefined;
    if (baseEntry && !next.has(this.config.baseDomain)) next.set(this.config.baseDomain, baseEntry);
    this.contexts = next;
  }

  /** The entry for a name: its own certificate, else the wildcard of its parent (one label only). */
  private entryFor(name: string) {
    const exact = this.contexts.get(name);
    if (exact) return exact;
    const dot = name.indexOf('.');
    return dot > 0 ? this.contexts.get(`*.${name.slice(dot + 1)}`) : undefined;
  }

  /** The certificate to present for an SNI name, if Spaces holds one. */
  contextFor(servername: string): tls.SecureContext | undefined {
    return this.entryFor(servername.toLowerCase())?.context;
  }

  /**
   * Whether plain HTTP to this host should move to HTTPS: a custom domain whose certificate (its
   * own, or its wildcard's) is in service. Managed hosts stay as `SPACES_SITE_URL` says.
   */
  hasCertificate(hostname: string): boolean {
    return !this.managed(hostname) && this.entryFor(hostname) !== undefined;
  }
}
