import { timingSafeEqual } from 'node:crypto';

/**
 * Base64url as this service writes it: the `-_` alphabet, no padding, zero trailing bits. Node's
 * decoder is lenient (it skips padding, whitespace and unknown characters, takes `+/` too and ignores
 * trailing bits), so many strings decode to the same bytes; a signed value must have one spelling,
 * or an altered token would still be accepted.
 */
const ALPHABET = /^[A-Za-z0-9_-]*$/;

/** The bytes of `text` when it is their canonical base64url spelling; null for any other string. */
export function decodeCanonicalBase64url(text: string): Buffer | null {
  // A length of 4n+1 can't be base64 at all; the re-encoding check catches every other variant.
  if (!ALPHABET.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

/**
 * Whether `given` is the canonical base64url spelling of the MAC `expected`, compared in constant
 * time (the canonical-spelling check only looks at `given`, so it reveals nothing about `expected`).
 */
export function macMatches(given: string, expected: Buffer): boolean {
  const bytes = decodeCanonicalBase64url(given);
  return bytes !== null && bytes.length === expected.length && timingSafeEqual(bytes, expected);
}
