import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../errors/problem.ts';

/** What an upload URL authorises: these exact bytes for this path of this version, until `exp`. */
export interface UploadGrant {
  versionId: string;
  path: string;
  sha256: string;
  size: number;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

/**
 * Upload tokens: `base64url(json).base64url(hmac-sha256)`. The URL itself is the credential, so a
 * plain `curl --upload-file` works; it is short-lived and names the digest, so it can't be reused for
 * other bytes or another version.
 */
export class UploadTokens {
  constructor(private readonly secret: Buffer) {}

  sign(g: UploadGrant): string {
    const payload = Buffer.from(
      JSON.stringify({ v: g.versionId, p: g.path, h: g.sha256, s: g.size, e: g.exp }),
    ).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  verify(token: string, nowMs: number): UploadGrant {
    const bad = (why: string) =>
      new ApiError('blob_gate_token_invalid', `The upload token is not valid: ${why}.`, {
        suggestions: ['Ask for fresh upload URLs by creating the version again or re-running the publish.'],
      });
    const dot = token.indexOf('.');
    if (dot <= 0) throw bad('malformed');
    const payload = token.slice(0, dot);
    const sig = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.mac(payload), 'base64url');
    if (sig.length !== expected.length || !timingSafeEqual(sig, expected)) throw bad('bad signature');
    let j: { v?: unknown; p?: unknown; h?: unknown; s?: unknown; e?: unknown };
    try {
      j = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw bad('malformed');
    }
    if (
      typeof j.v !== 'string' ||
      typeof j.p !== 'string' ||
      typeof j.h !== 'string' ||
      typeof j.s !== 'number' ||
      typeof j.e !== 'number'
    )
      throw bad('malformed');
    if (j.e * 1000 <= nowMs) throw bad('expired');
    return { versionId: j.v, path: j.p, sha256: j.h, size: j.s, exp: j.e };
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.secret).update(`upload:${payload}`).digest('base64url');
  }
}
