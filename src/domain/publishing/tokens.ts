import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { decodeCanonicalBase64url, macMatches } from '../../base64url.ts';
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
  /** A key object: HMACs made from it skip re-importing the raw key (a create signs thousands). */
  private readonly key: KeyObject;
  constructor(secret: Buffer) {
    this.key = createSecretKey(secret);
  }

  sign(g: UploadGrant): string {
    // The JSON of {v, p, h, s, e}, written out: only the path can need escaping (version ids and
    // digests are validated to plain characters).
    const json = `{"v":${JSON.stringify(g.versionId)},"p":${JSON.stringify(g.path)},"h":${JSON.stringify(g.sha256)},"s":${g.size},"e":${g.exp}}`;
    const payload = Buffer.from(json).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  verify(token: string, nowMs: number): UploadGrant {
    const bad = (why: string) =>
      new ApiError('blob_gate_token_invalid', `The upload token is not valid: ${why}.`, {
        suggestions: ['Ask for fresh upload URLs by creating the version again or re-running the publish.'],
      });
    const dot = token.indexOf('.');
    if (dot <= 0) throw bad('malformed');
    const payload = token.slice(0, dot);
    if (!macMatches(token.slice(dot + 1), this.mac(payload))) throw bad('bad signature');
    const json = decodeCanonicalBase64url(payload);
    if (!json) throw bad('malformed');
    let j: { v?: unknown; p?: unknown; h?: unknown; s?: unknown; e?: unknown };
    try {
      j = JSON.parse(json.toString('utf8'));
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

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update('upload:').update(payload).digest();
  }
}
