import fs from 'node:fs';
import path from 'node:path';
import type { Credential } from '../sdk/index.ts';
import { CLIENT_ID, postForm } from './oauth-form.ts';
import type { ConfigStore, Profile } from './store.ts';

/** Renew this long before the recorded expiry: a request sent just before it must not arrive after. */
const EARLY_MS = 60_000;
/** A lock older than this was left by a process that died while renewing. */
const STALE_LOCK_MS = 30_000;
const LOCK_WAIT_MS = 15_000;

/**
 * A profile's OAuth login from `spaces login`: the access token, renewed with the refresh token when
 * it has expired (or a request is refused with 401), the new pair written back to the profile.
 *
 * A refresh token works once (the server rotates it, and treats a second use as theft, ending the
 * whole login), so a renewal happens once for all of a command's requests at a time, and under a lock
 * file shared with other `spaces` processes: whoever comes second finds the profile renewed already
 * and takes that token instead of spending the old refresh token again.
 */
export class ProfileCredential implements Credential {
  private token: string;
  private expiresAt: number;
  private renewing: Promise<string | null> | null = null;

  constructor(
    private readonly store: ConfigStore,
    private readonly profileName: string,
    private readonly apiUrl: string,
    profile: Profile & { token: string },
    private readonly now: () => number = Date.now,
  ) {
    this.token = profile.token;
    this.expiresAt = Date.parse(profile.expiresAt ?? '');
  }

  private stored(): Profile | undefined {
    return this.store.read().profiles[this.profileName];
  }

  async current(): Promise<string> {
    if (Number.isFinite(this.expiresAt) && this.now() >= this.expiresAt - EARLY_MS) {
      return (await this.renew(this.token)) ?? this.token;
    }
    return this.token;
  }

  renew(refused: string): Promise<string | null> {
    if (refused !== this.token) return Promise.resolve(this.token); // renewed meanwhile
    this.renewing ??= this.renewNow().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  private async renewNow(): Promise<string | null> {
    return withLock(`${this.store.file}.lock`, async () => {
      const p = this.stored();
      if (p?.token && p.token !== this.token) {
        // Another process renewed it.
        this.token = p.token;
        this.expiresAt = Date.parse(p.expiresAt ?? '');
        return p.token;
      }
      if (!p?.refreshToken) return null;
      const r = await postForm(`${this.apiUrl}/v1/auth/oauth2/token`, {
        grant_type: 'refresh_token',
        refresh_token: p.refreshToken,
        client_id: CLIENT_ID,
      }).catch(() => null);
      const body = r?.body;
      if (r?.status !== 200 || typeof body?.access_token !== 'string') return null;
      const token = body.access_token;
      const expiresAt = expiryOf(body.expires_in, this.now());
      this.store.update((c) => {
        const cur = c.profiles[this.profileName];
        if (!cur) return;
        cur.token = token;
        if (typeof body.refresh_token === 'string') cur.refreshToken = body.refresh_token;
        if (expiresAt) cur.expiresAt = expiresAt;
        else delete cur.expiresAt;
      });
      this.token = token;
      this.expiresAt = Date.parse(expiresAt ?? '');
      return token;
    });
  }
}

/** `expires_in` seconds from now, as the profile records it. */
export function expiryOf(expiresIn: unknown, now = Date.now()): string | undefined {
  return typeof expiresIn === 'number' ? new Date(now + expiresIn * 1000).toISOString() : undefined;
}

/** Runs `fn` holding an exclusive lock file (created with O_EXCL; a stale one is taken over). */
async function withLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  for (;;) {
    try {
      fs.closeSync(fs.openSync(file, 'wx', 0o600));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0);
      if (age > STALE_LOCK_MS || Date.now() > deadline) fs.rmSync(file, { force: true });
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}
