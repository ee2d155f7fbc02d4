import { describe, expect, it } from 'vitest';
import { encodePath, normalisePath, sameSiteLocation } from '../../src/site/path.ts';

describe('normalisePath', () => {
  const ok: Array<[string, string]> = [
    ['/', '/'],
    ['/index.html', '/index.html'],
    ['/a/b/', '/a/b/'],
    ['//a///b', '/a/b'],
    ['/a/./b', '/a/b'],
    ['/a/b/..', '/a/'],
    ['/a/b/../c', '/a/c'],
    ['/a/.', '/a/'],
    ['/a/%2e%2e/b', '/b'],
    ['/a/%2E/b', '/a/b'],
    ['/caf%C3%A9', '/café'],
    ['/cafe%CC%81', '/café'], // NFD → NFC
    ['/%252e%252e/etc', '/%2e%2e/etc'], // decoded once: literal `%2e%2e`, not a parent step
    ['/%25', '/%'],
    ['/a%20b', '/a b'],
    ['//evil.com', '/evil.com'],
    ['/.well-known/x', '/.well-known/x'],
  ];
  it.each(ok)('%s → %s', (raw, want) => {
    expect(normalisePath(raw)).toEqual({ ok: true, path: want });
  });

  const bad: Array<[string, string]> = [
    ['', 'not_absolute'],
    ['a/b', 'not_absolute'],
    ['/..', 'escapes_root'],
    ['/../etc/passwd', 'escapes_root'],
    ['/a/../../etc', 'escapes_root'],
    ['/%2e%2e/%2e%2e/etc/passwd', 'escapes_root'],
    ['/..%2f..%2fetc/passwd', 'encoded_separator'],
    ['/a%2fb', 'encoded_separator'],
    ['/a%2Fb', 'encoded_separator'],
    ['/a%5cb', 'encoded_separator'],
    ['/..%5c..%5cwindows', 'encoded_separator'],
    ['/a\\b', 'backslash'],
    ['/\\\\evil.com', 'backslash'],
    ['/a%00.html', 'nul_byte'],
    ['/a%0d%0aSet-Cookie:x', 'control_character'],
    ['/a%09', 'control_character'],
    ['/a%7f', 'control_character'],
    ['/%c2%85', 'control_character'],
    ['/%c0%ae%c0%ae/etc', 'invalid_utf8'], // overlong `.`
    ['/%c0%af', 'invalid_utf8'], // overlong `/`
    ['/%e0%80%ae', 'invalid_utf8'],
    ['/%ff', 'invalid_utf8'],
    ['/%ed%a0%80', 'invalid_utf8'], // surrogate
    ['/%', 'bad_percent_encoding'],
    ['/%2', 'bad_percent_encoding'],
    ['/%zz', 'bad_percent_encoding'],
    [`/${'a'.repeat(9000)}`, 'too_long'],
  ];
  it.each(bad)('%s is refused (%s)', (raw, reason) => {
    expect(normalisePath(raw)).toEqual({ ok: false, reason });
  });

  it('is idempotent on its own output for paths without `%`', () => {
    for (const [raw] of ok) {
      const once = normalisePath(raw);
      if (once.ok && !once.path.includes('%')) expect(normalisePath(encodePath(once.path))).toEqual(once);
    }
  });
});

describe('encodePath and sameSiteLocation', () => {
  it('encodes what a Location must not carry raw', () => {
    expect(encodePath('/a b/café?#')).toBe('/a%20b/caf%C3%A9%3F%23');
    expect(encodePath('/x\\y')).toBe('/x%5Cy');
  });
  it.each([
    ['//evil.com', '/evil.com'],
    ['/\\evil.com', '/evil.com'],
    ['\\/evil.com', '/evil.com'],
    ['///a', '/a'],
    ['/ok', '/ok'],
  ])('%s → %s', (loc, want) => {
    expect(sameSiteLocation(loc)).toBe(want);
  });
});
