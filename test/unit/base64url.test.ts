import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeCanonicalBase64url, macMatches } from '../../src/base64url.ts';
import { ApiError } from '../../src/errors/problem.ts';
import { Cursors } from '../../src/http/pagination.ts';

/** Spellings Node's lenient decoder maps to the same bytes as `canonical` (which must end in a partial group). */
function variants(canonical: string): Record<string, string> {
  const last = canonical.at(-1)!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  // The last character of a 43-char (32-byte) string carries 2 data bits and 4 that must be zero.
  const flipped = alphabet[alphabet.indexOf(last) ^ 1]!;
  const out: Record<string, string> = {
    'trailing bits': canonical.slice(0, -1) + flipped,
    padding: `${canonical}=`,
    'whitespace inside': `${canonical.slice(0, 5)} ${canonical.slice(5)}`,
    'trailing newline': `${canonical}\n`,
    'unknown character': `${canonical.slice(0, 5)}*${canonical.slice(5)}`,
  };
  if (/[-_]/.test(canonical)) out['+/ alphabet'] = canonical.replace(/-/g, '+').replace(/_/g, '/');
  return out;
}

describe('canonical base64url', () => {
  const mac = createHmac('sha256', 'k').update('x').digest();
  const canonical = mac.toString('base64url');

  it('decodes the canonical spelling, and only it', () => {
    expect(decodeCanonicalBase64url(canonical)).toEqual(mac);
    expect(decodeCanonicalBase64url('')).toEqual(Buffer.alloc(0));
    for (const [why, text] of Object.entries(variants(canonical))) {
      // Node accepts each of these as the same bytes; the canonical decoder refuses them.
      expect(Buffer.from(text, 'base64url'), why).toEqual(mac);
      expect(decodeCanonicalBase64url(text), why).toBeNull();
      expect(macMatches(text, mac), why).toBe(false);
    }
    expect(decodeCanonicalBase64url('+/8')).toBeNull();
    expect(decodeCanonicalBase64url('-_8')).toEqual(Buffer.from([0xfb, 0xff]));
    expect(decodeCanonicalBase64url('A')).toBeNull();
  });

  it('matches a MAC in its canonical spelling only', () => {
    expect(macMatches(canonical, mac)).toBe(true);
    expect(macMatches(canonical, createHmac('sha256', 'k').update('y').digest())).toBe(false);
    expect(macMatches(canonical.slice(0, -2), mac)).toBe(false);
  });
});

describe('cursors', () => {
  const cursors = new Cursors(Buffer.alloc(32, 3));
  const refused = (listing: string, cursor: string) => {
    try {
      cursors.decode(listing, cursor);
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('invalid_cursor');
      expect((err as ApiError).extras.pointer).toBe('/cursor');
      return true;
    }
    return false;
  };

  it('refuses every other spelling of an issued cursor, in either part', () => {
    // Deterministic (fixed secret): the first cursor whose signature has a `-` or `_`.
    let cursor = '';
    for (let i = 0; !/[-_]/.test(cursor.split('.')[1] ?? ''); i++)
      cursor = cursors.encode('teams:k', `team_${i}`);
    const [payload, sig] = cursor.split('.') as [string, string];
    expect(cursors.decode('teams:k', cursor)).toMatch(/^team_\d+$/);
    const sigVariants = variants(sig);
    expect(Object.keys(sigVariants)).toContain('+/ alphabet');
    for (const [why, v] of Object.entries(sigVariants))
      expect(refused('teams:k', `${payload}.${v}`), why).toBe(true);
    // The payload is signed as text, and its own spelling is checked too.
    for (const v of [`${payload}=`, ` ${payload}`, payload.replace(/-/g, '+')])
      if (v !== payload) expect(refused('teams:k', `${v}.${sig}`), v).toBe(true);
    expect(refused('teams:other', cursor)).toBe(true);
    expect(refused('teams:k', `${cursor}.`)).toBe(true);
  });
});
