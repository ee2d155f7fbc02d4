import { describe, expect, it } from 'vitest';
import {
  type CaptureRef,
  compileDestination,
  compilePattern,
  compileTemplate,
  fillDestination,
  fillTemplate,
  matchPattern,
  wildcardMatch,
} from '../../src/site/match.ts';

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

describe('destinations', () => {
  const positions: Array<[string, string[], boolean, Array<[string, string]>, boolean]> = [
    [
      '/a/:x?q=:y#f-:z',
      ['x', 'y', 'z'],
      false,
      [
        ['x', 'path'],
        ['y', 'query'],
        ['z', 'fragment'],
      ],
      true,
    ],
    ['/page#a?b=:x', ['x'], false, [['x', 'fragment']], false],
    ['/page#a?b', [], false, [], false],
    ['/x?a=1?b=:b#c', ['b'], false, [['b', 'query']], true],
    [
      'https://:sub.example.com/:splat?u=:u',
      ['sub', 'splat', 'u'],
      true,
      [
        ['sub', 'host'],
        ['splat', 'path'],
        ['u', 'query'],
      ],
      true,
    ],
    ['https://example.com:splat', ['splat'], true, [['splat', 'host']], false],
    ['https://example.com?x=:x#y', ['x'], false, [['x', 'query']], true],
    ['https://example.com#:x', ['x'], false, [['x', 'fragment']], false],
  ];
  it.each(positions)('%s: captures land in %j', (text, names, pathSplat, want, hasQuery) => {
    const d = compileDestination(text, names, pathSplat);
    expect(d.hasQuery).toBe(hasQuery);
    expect(
      d.template
        .filter((p) => typeof p !== 'string')
        .map((p) => [(p as CaptureRef).cap, (p as CaptureRef).at]),
    ).toEqual(want);
  });

  it('only the path splat of the source keeps its `/`', () => {
    expect(compileDestination('/a/:splat', ['splat'], true).template).toEqual([
      '/a/',
      { cap: 'splat', at: 'path', splat: true },
    ]);
    // A query capture that happens to be named `splat` (no `*` in the source) is one segment.
    expect(compileDestination('/a/:splat', ['splat'], false).template).toEqual([
      '/a/',
      { cap: 'splat', at: 'path' },
    ]);
  });

  const fills: Array<[string, string[], boolean, Record<string, string>, string | null]> = [
    // Query: a value can never add a parameter, a fragment, or a space written as `+`.
    ['/get?url=:url', ['url'], false, { url: 'x&admin=1' }, '/get?url=x%26admin%3D1'],
    ['/get?v=:v', ['v'], false, { v: 'a+b;c#d?e%f g=é' }, '/get?v=a%2Bb%3Bc%23d%3Fe%25f%20g%3D%C3%A9'],
    ['/get?v=:v', ['v'], false, { v: "a,b/c:d@e!$'()*~" }, "/get?v=a,b/c:d@e!$'()*~"],
    ['/get?:k=1', ['k'], false, { k: 'a&b=c' }, '/get?a%26b%3Dc=1'],
    ['/r?to=:splat', ['splat'], true, { splat: 'a/b&c' }, '/r?to=a/b%26c'],
    // Path segment: `/`, `?`, `#`, `%` and space are encoded.
    ['/people/:name', ['name'], false, { name: 'a/b?c#d%e f' }, '/people/a%2Fb%3Fc%23d%25e%20f'],
    [
      '/people/:name',
      ['name'],
      false,
      { name: "a:b@c;d=e&f+g$h!i'(j)*k,l" },
      "/people/a:b@c;d=e&f+g$h!i'(j)*k,l",
    ],
    ['/p/:splat', ['splat'], false, { splat: 'a/b' }, '/p/a%2Fb'],
    // Splat: keeps its `/`, nothing else.
    ['/store/:splat', ['splat'], true, { splat: 'a/b?c#d\\e' }, '/store/a/b%3Fc%23d%5Ce'],
    ['https://up.example/v1/:splat', ['splat'], true, { splat: 'a b/c' }, 'https://up.example/v1/a%20b/c'],
    // Fragment: `#` encoded, `/` and `?` kept.
    ['/page#:f', ['f'], false, { f: 'a b#c?d/e' }, '/page#a%20b%23c?d/e'],
    // `%` always: a decoded value goes back in once, never decoded twice.
    ['/p/:x', ['x'], false, { x: '%2e%2e' }, '/p/%252e%252e'],
    // Host: DNS-label characters or nothing.
    ['https://:sub.example.com/', ['sub'], false, { sub: 'de' }, 'https://de.example.com/'],
    ['https://:sub.example.com/', ['sub'], false, { sub: 'evil.com' }, null],
    ['https://:sub.example.com/', ['sub'], false, { sub: 'evil.com/' }, null],
    ['https://:sub.example.com/', ['sub'], false, { sub: 'x@evil.com' }, null],
    ['https://:sub.example.com/', ['sub'], false, { sub: 'x\\evil.com' }, null],
    ['https://example.com:splat', ['splat'], true, { splat: '.evil.com' }, null],
    ['https://example.com:splat', ['splat'], true, { splat: '//evil.com' }, null],
    ['https://example.com:splat', ['splat'], true, { splat: '@evil.com' }, null],
    // Dot segments made by a capture would climb out of the path the author wrote.
    ['/docs/:q', ['q'], false, { q: '..' }, null],
    ['/docs/:q', ['q'], false, { q: '.' }, null],
    ['/docs/.:q/x', ['q'], false, { q: '.' }, null],
    ['https://up.example/v1/items/:q', ['q'], false, { q: '..' }, null],
    ['/img/:splat', ['splat'], true, { splat: '../x' }, null],
    ['/docs/:q', ['q'], false, { q: '..a' }, '/docs/..a'],
    ['/docs/:q', ['q'], false, { q: '' }, '/docs/'],
    ['/docs?q=:q', ['q'], false, { q: '..' }, '/docs?q=..'],
    ['/docs#:q', ['q'], false, { q: '..' }, '/docs#..'],
  ];
  it.each(fills)('%s %j %s with %j → %s', (text, names, pathSplat, caps, want) => {
    expect(fillDestination(compileDestination(text, names, pathSplat).template, caps)).toBe(want);
  });
});
