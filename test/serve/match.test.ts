import { describe, expect, it } from 'vitest';
import {
  compilePattern,
  compileTemplate,
  fillTemplate,
  matchPattern,
  wildcardMatch,
} from '../../src/serve/match.ts';

describe('compilePattern + matchPattern', () => {
  const cases: Array<[string, string, string | null, Record<string, string> | null]> = [
    ['/about', '/about', null, {}],
    ['/about', '/about/', null, {}],
    ['/about/', '/about', null, {}],
    ['/about', '/About', null, null],
    ['/about', '/about/x', null, null],
    ['/', '/', null, {}],
    ['/news/*', '/news', null, { splat: '' }],
    ['/news/*', '/news/', null, { splat: '' }],
    ['/news/*', '/news/2024/a', null, { splat: '2024/a' }],
    ['/news/*', '/news/2024/a/', null, { splat: '2024/a/' }],
    ['/news/*', '/newsletter', null, null],
    ['/*', '/', null, { splat: '' }],
    ['/*', '/a/b', null, { splat: 'a/b' }],
    ['/img*', '/img.png', null, { splat: '.png' }],
    ['/img*', '/im', null, null],
    ['/blog/:year/:slug', '/blog/2024/hello', null, { year: '2024', slug: 'hello' }],
    ['/blog/:year/:slug', '/blog/2024', null, null],
    ['/blog/:year/:slug', '/blog/2024/hello/x', null, null],
    ['/:lang/*', '/de/docs/a', null, { lang: 'de', splat: 'docs/a' }],
    ['/caf%C3%A9', '/café', null, {}],
    ['https://example.com/x', '/x', 'example.com', {}],
    ['https://example.com/x', '/x', 'EXAMPLE.com:8080', {}],
    ['https://example.com/x', '/x', 'other.com', null],
    ['https://example.com/x', '/x', null, null],
    ['https://:sub.example.com/*', '/a', 'docs.example.com', { sub: 'docs', splat: 'a' }],
    ['https://*.example.com/', '/', 'a.b.example.com', {}],
    ['https://*.example.com/', '/', 'example.com', null],
    ['https://app-*.example.com/', '/', 'app-12.example.com', {}],
    ['https://app-*.example.com/', '/', 'web-12.example.com', null],
  ];
  it.each(cases)('%s vs %s (host %s)', (pattern, path, host, want) => {
    expect(matchPattern(compilePattern(pattern), path, host)).toEqual(want);
  });

  it.each([
    'about',
    '//evil.com/x',
    'ftp://x/y',
    '/a/*/b',
    '/a*b',
    '/*/*',
    '/:1abc',
    '/:a/:a',
    '/:a*',
    '/a?b=1',
    '/a\\b',
    '/a/../b',
    'https://example.com:8080/x',
    'https://user@example.com/x',
    'https://[::1]/x',
    '/%zz',
  ])('rejects %s', (pattern) => {
    expect(() => compilePattern(pattern)).toThrow();
  });

  it('headers allow `*` only as a whole segment', () => {
    expect(() => compilePattern('/img*', { splatWholeSegmentOnly: true })).toThrow();
    expect(compilePattern('/img/*', { splatWholeSegmentOnly: true }).splat).toEqual({ prefix: '' });
  });

  it('stays linear on hostile input', () => {
    const p = compilePattern(`/${Array.from({ length: 200 }, (_, i) => `:p${i}`).join('/')}/*`);
    const path = `/${'a/'.repeat(5000)}`;
    const t = performance.now();
    expect(matchPattern(p, path, null)).not.toBeNull();
    expect(wildcardMatch('*a*a*a*a*a*a*a*a*b', 'a'.repeat(3000))).toBe(false);
    expect(performance.now() - t).toBeLessThan(500);
  });
});

describe('wildcardMatch', () => {
  it.each([
    ['*', '', true],
    ['*', 'anything', true],
    ['*.js', 'app.js', true],
    ['*.js', 'app.json', false],
    ['Mozilla/*Firefox*', 'Mozilla/5.0 (X11) Firefox/120', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'aXbY', false],
    ['exact', 'exact', true],
    ['exact', 'exactly', false],
  ])('%s ~ %s → %s', (p, t, want) => {
    expect(wildcardMatch(p, t)).toBe(want);
  });
});

describe('templates', () => {
  it('substitutes known captures only and encodes them', () => {
    const t = compileTemplate('https://x.com:8080/:lang/:splat?id=:id&m=mailto:x', ['lang', 'splat', 'id']);
    expect(fillTemplate(t, { lang: 'd e', splat: 'a/b c', id: '1/2' }, true)).toBe(
      'https://x.com:8080/d%20e/a/b%20c?id=1%2F2&m=mailto:x',
    );
    expect(fillTemplate(compileTemplate('v=:v', ['v']), { v: 'a b' }, false)).toBe('v=a b');
  });
});
