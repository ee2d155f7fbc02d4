import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UploadTokens } from '../../src/domain/publishing/tokens.ts';

describe('upload tokens', () => {
  const secret = Buffer.alloc(32, 7);
  const tokens = new UploadTokens(secret);
  const grant = {
    versionId: 'ver_01KAZ0000000000000000000',
    path: 'dir/naïve "quoted" \\ file.txt',
    sha256: 'a'.repeat(64),
    size: 2048,
    exp: 1_790_000_000,
  };

  it('signs base64url(JSON).HMAC, as tokens issued before were', () => {
    const t = tokens.sign(grant);
    const payload = Buffer.from(
      JSON.stringify({ v: grant.versionId, p: grant.path, h: grant.sha256, s: grant.size, e: grant.exp }),
    ).toString('base64url');
    const mac = createHmac('sha256', secret).update(`upload:${payload}`).digest('base64url');
    expect(t).toBe(`${payload}.${mac}`);
    expect(tokens.verify(t, (grant.exp - 1) * 1000)).toEqual(grant);
  });

  it('refuses a changed payload, another key, and an expired token', () => {
    const t = tokens.sign(grant);
    const [payload, mac] = t.split('.') as [string, string];
    const other = Buffer.from(
      JSON.stringify({ v: grant.versionId, p: 'other.txt', h: grant.sha256, s: grant.size, e: grant.exp }),
    ).toString('base64url');
    expect(() => tokens.verify(`${other}.${mac}`, 0)).toThrow(/bad signature/);
    expect(() => new UploadTokens(Buffer.alloc(32, 8)).verify(t, 0)).toThrow(/bad signature/);
    expect(() => tokens.verify(`${payload}.${mac}`, grant.exp * 1000)).toThrow(/expired/);
    expect(() => tokens.verify('nodot', 0)).toThrow(/malformed/);
    // The same signature bytes spelled another way (padding, whitespace, `+/`) are not the token.
    for (const other of [
      `${mac}=`,
      `${mac} `,
      `${mac.slice(0, 3)}\n${mac.slice(3)}`,
      mac.replace(/-/g, '+').replace(/_/g, '/'),
    ])
      if (other !== mac)
        expect(() => tokens.verify(`${payload}.${other}`, 0), other).toThrow(/bad signature/);
  });
});
