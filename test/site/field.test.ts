import { describe, expect, it } from 'vitest';
import {
  asciiUrl,
  authorValueProblem,
  encodeHeaderCapture,
  fillHeaderValue,
  isBlankValue,
  isFieldList,
  isFieldName,
  isFieldValue,
  locationValue,
} from '../../src/site/field.ts';

// Strings that would put a byte on the wire the author (or visitor) did not validly write. Header
// strings are written as latin1, one byte per code unit: U+010D U+010A go out as CR LF.
const SMUGGLERS: Array<[string, string]> = [
  ['CR', 'a\rb'],
  ['LF', 'a\nb'],
  ['CRLF', 'a\r\nSet-Cookie: x=1'],
  ['NUL', 'a\u0000b'],
  ['other C0', 'a\u0001b'],
  ['DEL', 'a\u007fb'],
  ['U+0100', 'a\u0100b'],
  ['U+010D U+010A (low bytes CR LF)', 'a\u010d\u010aSet-Cookie: x=1; Domain=example.com'],
  ['U+FFFF', 'a\uffffb'],
  ['astral', 'a\u{1F600}b'],
  ['lone surrogate', 'a\ud800b'],
  ['U+2028', 'a\u2028b'],
  ['U+2029', 'a\u2029b'],
  ['obs-fold', 'a\r\n folded'],
];

describe('the field grammar', () => {
  it.each(SMUGGLERS)('refuses %s in a value, on the wire and from an author', (_label, value) => {
    expect(isFieldValue(value)).toBe(false);
    expect(isFieldList(['X-A', 'ok', 'X-B', value])).toBe(false);
    expect(authorValueProblem(value)).toMatch(/^contains /);
  });

  it('takes visible ASCII, SP, HTAB and Latin-1 (obs-text) values', () => {
    for (const v of ['DENY', 'a b\tc', 'max-age=1, public', 'café', '\u00a0x\u00ff', '']) {
      expect(isFieldValue(v)).toBe(true);
    }
    expect(authorValueProblem('café; ÿ')).toBeNull();
    expect(isFieldList(['X-A', 'ok', 'Set-Cookie', 'a=1'])).toBe(true);
  });

  it('refuses C1 controls and empty values from authors, with a reason', () => {
    expect(authorValueProblem('a\u0085b')).toBe('contains the control character U+0085');
    for (const blank of ['', ' \t ']) expect(isBlankValue(blank)).toBe(true);
    expect(isBlankValue(' x ')).toBe(false);
    expect(authorValueProblem('a\u010db')).toBe(
      'contains `č` (U+010D), which is beyond Latin-1: a header value carries one byte per character',
    );
    expect(authorValueProblem('a\u2028')).toBe('contains a Unicode line separator (U+2028)');
    expect(authorValueProblem('x\u{1F600}')).toContain('(U+1F600)');
  });

  it('names are tokens', () => {
    expect(isFieldName('X-Frame-Options')).toBe(true);
    for (const n of ['', 'X A', 'X:A', 'X\rA', 'X\u010dA', 'X(A)']) expect(isFieldName(n)).toBe(false);
    expect(isFieldList(['X A', 'v'])).toBe(false);
  });
});

describe('locations', () => {
  it('percent-encodes everything but visible ASCII as UTF-8, and leaves ASCII URLs alone', () => {
    expect(locationValue('/a?b=1#c')).toBe('/a?b=1#c');
    expect(locationValue('/a\u010d\u010aSet-Cookie: x=1')).toBe('/a%C4%8D%C4%8ASet-Cookie:%20x=1');
    expect(locationValue('/\r\n\u0000\u2028')).toBe('/%0D%0A%00%E2%80%A8');
    expect(locationValue('/caf\u00e9/\u{1F600}')).toBe('/caf%C3%A9/%F0%9F%98%80');
    for (const [, v] of SMUGGLERS) expect(isFieldValue(locationValue(`/${v}`))).toBe(true);
  });

  it('writes destination URLs as browsers send them: punycode hosts, encoded paths', () => {
    expect(asciiUrl('/plain')).toBe('/plain');
    expect(asciiUrl('/café')).toBe('/caf%C3%A9');
    expect(asciiUrl('https://bücher.example/ü?q=ä')).toBe('https://xn--bcher-kva.example/%C3%BC?q=%C3%A4');
    expect(asciiUrl('https://:sub.bücher.example/:splat')).toBe('https://:sub.xn--bcher-kva.example/:splat');
  });
});

describe('captures in header values', () => {
  it('are opaque: list, parameter and quoting delimiters are encoded', () => {
    expect(encodeHeaderCapture('x;Domain=example.com', false)).toBe('x%3BDomain%3Dexample.com');
    expect(encodeHeaderCapture('a,b "c"', false)).toBe('a%2Cb%20%22c%22');
    expect(encodeHeaderCapture('docs/a.html', true)).toBe('docs/a.html');
    expect(encodeHeaderCapture('docs/a.html', false)).toBe('docs%2Fa.html');
    expect(encodeHeaderCapture('\u010d\u010a\r\n', false)).toBe('%C4%8D%C4%8A%0D%0A');
  });

  it('fill a template without touching its literal text', () => {
    expect(fillHeaderValue(['c=', { cap: 'splat' }, '; Path=/'], { splat: 'x;Domain=example.com' })).toBe(
      'c=x%3BDomain%3Dexample.com; Path=/',
    );
  });
});
