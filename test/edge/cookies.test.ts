import { describe, expect, it } from 'vitest';
import { parseCookies, serializeCookie, withoutServiceCookies } from '../../src/serve/cookies.ts';

describe('cookies', () => {
  it('parses, first name wins, decodes when valid', () => {
    const c = parseCookies('a=1; b="two"; a=3; c=%E2%98%83; d=%zz; =x; e');
    expect(c.get('a')).toBe('1');
    expect(c.get('b')).toBe('two');
    expect(c.get('c')).toBe('☃');
    expect(c.get('d')).toBe('%zz');
    expect(c.has('e')).toBe(false);
    expect(parseCookies(undefined).size).toBe(0);
  });

  it('serializes host-only cookies and refuses bad names', () => {
    expect(serializeCookie('n', 'a b;c', { maxAge: 60, httpOnly: true, secure: true, sameSite: 'Lax' })).toBe(
      'n=a%20b%3Bc; Max-Age=60; Path=/; HttpOnly; Secure; SameSite=Lax',
    );
    expect(() => serializeCookie('a;b', 'x')).toThrow();
    expect(serializeCookie('n', 'v')).not.toMatch(/Domain/i);
  });

  it('drops the service cookies before forwarding', () => {
    expect(withoutServiceCookies('__spaces_clearance=x; theme=dark; __spaces_access=y')).toBe('theme=dark');
    expect(withoutServiceCookies('__spaces_clearance=x')).toBeUndefined();
    expect(withoutServiceCookies(undefined)).toBeUndefined();
  });
});
