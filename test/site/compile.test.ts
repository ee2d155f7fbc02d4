import { describe, expect, it } from 'vitest';
import { ownHostMatcher } from '../../src/domain/hosts/names.ts';
import { applyOverlay, compileSite, recompileWithConfig } from '../../src/site/compile.ts';
import { entries, site } from '../edge/helpers.ts';

const files = entries([
  'index.html',
  'about.html',
  'docs/index.html',
  'blog/index.html',
  '404.html',
  'spa.html',
]);

function codes(input: Parameters<typeof compileSite>[0]) {
  const r = compileSite(input);
  return { ok: r.ok, codes: r.diagnostics.map((d) => d.code), r };
}

describe('compileSite', () => {
  it('compiles to JSON-safe data with defaults', () => {
    const r = compileSite({ files });
    expect(r.ok).toBe(true);
    expect(r.rules.settings).toEqual({
      index: 'index.html',
      cleanUrls: true,
      listing: false,
      fallback: null,
    });
    expect(JSON.parse(JSON.stringify(r.rules))).toEqual(r.rules);
  });

  it('a 200 fallback turns clean URLs off unless set explicitly', () => {
    expect(compileSite({ files, config: { fallback: '/spa.html' } }).rules.settings).toMatchObject({
      cleanUrls: false,
      fallback: { path: '/spa.html', status: 200 },
    });
    expect(
      compileSite({ files, config: { fallback: { path: '/404.html', status: 404 } } }).rules.settings
        .cleanUrls,
    ).toBe(true);
  });

  describe('loops are rejected at compile time', () => {
    const loops: Array<[string, string, Record<string, unknown>?]> = [
      ['self', '/a /a/ 301'],
      ['two-rule cycle', '/a /b 301\n/b /a 301'],
      ['three-rule cycle', '/a /b 302\n/b /c 302\n/c /a 302'],
      ['splat feeds itself', '/blog/* /blog/en/:splat 301'],
      ['catch-all to a page', '/* /index.html 301'],
      ['rule against clean URLs', '/about /about.html 301'],
      ['rule against the index redirect', '/docs/ /docs/index.html 301'],
      ['rule against the directory slash', '/docs/ /docs 301'],
      ['placeholder ping-pong', '/:x/y /y/:x 301\n/y/:x /:x/y 301'],
      ['conditional loop', '/* /fr/:splat 302 Country=fr'],
      ['query kept', '/s q=:q /s?q=:q 301'],
    ];
    it.each(loops)('%s', (_name, text) => {
      const r = codes({ files, redirectsText: text });
      expect(r.ok).toBe(false);
      expect(r.codes.some((c) => c === 'redirect_loop' || c === 'redirect_self_loop')).toBe(true);
    });

    it('reports the chain and drops the rule', () => {
      const r = compileSite({ files, redirectsText: '/ok /docs/ 301\n/a /b 301\n/b /a 301' });
      const loop = r.diagnostics.find((d) => d.code === 'redirect_loop');
      expect(loop).toMatchObject({
        path: '_redirects:2',
        details: { rule: '_redirects:2', chain: ['/a', '/b', '/a'] },
      });
      expect(r.rules.routes.map((x) => x.ref)).toEqual(['_redirects:1']);
    });

    const fine: Array<[string, string]> = [
      ['move a section', '/old/* /new/:splat 301'],
      ['drop query with captures', '/s q=:q /s 301'],
      ['chain that ends', '/a /b 301\n/b /docs/ 301'],
      ['rewrite to itself under a splat', '/app/* /app/index.html 200'],
      ['conditions exclusive', '/en/* /fr/:splat 302 Country=fr\n/fr/* /en/:splat 302 Country=us'],
      ['external', '/* https://example.com/:splat 301'],
      ['swap that does not match again', '/:x/y /y/:x 301'],
    ];
    it.each(fine)('%s is accepted', (_name, text) => {
      const r = codes({ files, redirectsText: text });
      expect(r.codes).toEqual([]);
      expect(r.ok).toBe(true);
    });
  });

  describe('loops through the space’s own hostnames are rejected too', () => {
    const isOwnHost = ownHostMatcher('spaces.test', 'site', ['www.site-custom.example']);
    const own = (text: string, config?: Record<string, unknown>) =>
      compileSite({ files, redirectsText: text, config, isOwnHost });

    it('knows the space’s hostnames: its name, every channel or version prefix, custom domains', () => {
      for (const h of [
        'site.spaces.test',
        'SITE.spaces.test.',
        'preview--site.spaces.test',
        'ver-01hzy3k0000000000000000000--site.spaces.test',
        'www.site-custom.example',
      ])
        expect(isOwnHost(h), h).toBe(true);
      for (const h of [
        'other.spaces.test',
        'site.spaces.test.evil.com',
        'a.site.spaces.test',
        'site-custom.example',
      ])
        expect(isOwnHost(h), h).toBe(false);
    });

    const loops: Array<[string, string]> = [
      ['the same URL on the live hostname', '/a https://site.spaces.test/a 301'],
      ['another scheme, port and case', '/a http://SITE.spaces.test:8080/a/ 302'],
      [
        'through a preview hostname',
        '/a https://preview--site.spaces.test/b 301\n/b https://site.spaces.test/a 301',
      ],
      ['a splat on a custom domain', '/a/* https://www.site-custom.example/a/:splat 308'],
      ['an absolute hop, then a relative one', '/a https://site.spaces.test/b 301\n/b /a 301'],
      ['a proxy to itself', '/api/* https://site.spaces.test/api/:splat 200'],
      [
        'a host rule',
        'https://site.spaces.test/x https://preview--site.spaces.test/x 301\nhttps://preview--site.spaces.test/x https://site.spaces.test/x 301',
      ],
    ];
    it.each(loops)('%s', (_name, text) => {
      const r = own(text);
      expect(r.ok).toBe(false);
      expect(r.diagnostics.map((d) => d.code)).toContain('redirect_loop');
    });

    it('reports the chain with the hostnames it went through', () => {
      const r = own('/ok /docs/ 301\n/a https://site.spaces.test/a 301');
      expect(r.diagnostics).toEqual([
        expect.objectContaining({
          code: 'redirect_loop',
          path: '_redirects:2',
          details: {
            rule: '_redirects:2',
            chain: ['/a', 'https://site.spaces.test/a', 'https://site.spaces.test/a'],
          },
        }),
      ]);
      expect(r.rules.routes.map((x) => x.ref)).toEqual(['_redirects:1']);
    });

    it('covers config redirects and rewrites', () => {
      const r = own('', {
        redirects: [{ source: '/c', destination: 'https://site.spaces.test/c', status: 301 }],
        rewrites: [{ source: '/p', destination: 'https://site.spaces.test/p' }],
      });
      expect(r.diagnostics.map((d) => [d.code, (d.details as { rule: string }).rule])).toEqual([
        ['redirect_loop', 'redirects[0]'],
        ['redirect_loop', 'rewrites[0]'],
      ]);
    });

    const fine: Array<[string, string]> = [
      ['another space', '/a https://other.spaces.test/a 301'],
      ['a chain that ends on a page', '/a https://site.spaces.test/docs/ 301'],
      ['a proxy elsewhere', '/api/* https://api.example.com/:splat 200'],
      ['a proxy to a page of the space', '/x https://preview--site.spaces.test/about 200'],
    ];
    it.each(fine)('%s is accepted', (_name, text) => {
      expect(own(text).diagnostics).toEqual([]);
    });
  });

  it('caps rules at 2,000 static + 100 dynamic, shared with config', () => {
    const staticRules = Array.from({ length: 2000 }, (_, i) => `/s${i} /t${i} 301`).join('\n');
    const dynamic = Array.from({ length: 99 }, (_, i) => `/d${i}/* /e${i}/:splat 301`).join('\n');
    const atCap = codes({
      files,
      redirectsText: `${staticRules}\n${dynamic}`,
      config: { rewrites: [{ source: '/x/*', destination: '/index.html' }] },
    });
    expect(atCap.codes).toEqual([]);
    const over = codes({
      files,
      redirectsText: `${staticRules}\n${dynamic}`,
      config: {
        redirects: [{ source: '/y/:a', destination: '/z' }],
        rewrites: [{ source: '/x/*', destination: '/index.html' }],
      },
    });
    expect(over.codes).toEqual(['routing_rules_over_plan']);
    expect(over.r.diagnostics[0].details).toMatchObject({ static: 2000, dynamic: 101 });
    const plan = codes({ files, redirectsText: '/a /b\n/c /d', limits: { staticRules: 1, dynamicRules: 0 } });
    expect(plan.codes).toEqual(['routing_rules_over_plan']);
  });

  it('vars expand in _redirects and config destinations', () => {
    const s = site(['index.html'], {
      vars: { SHOP: 'https://shop.example.com' },
      redirectsText: '/shop/* {{ vars.SHOP }}/:splat 302',
      config: { redirects: [{ source: '/buy', destination: '{{vars.SHOP}}/cart', status: 307 }] },
    });
    expect(s.summary('/shop/a')).toBe('redirect:302 https://shop.example.com/a');
    expect(s.summary('/buy')).toBe('redirect:307 https://shop.example.com/cart');
    expect(
      codes({ files, config: { redirects: [{ source: '/x', destination: '{{ vars.NOPE }}' }] } }).codes,
    ).toEqual(['template_variable_unresolved']);
  });

  const badConfig: Array<[string, Record<string, unknown>, string]> = [
    [
      'redirect status 200',
      { redirects: [{ source: '/a', destination: '/b', status: 200 }] },
      'redirect_status_invalid',
    ],
    [
      'rewrite relative',
      { rewrites: [{ source: '/a', destination: 'b.html' }] },
      'redirect_rewrite_target_relative',
    ],
    [
      'notFound absolute',
      { rewrites: [{ source: '/a', destination: 'https://x.com/', notFound: true }] },
      'redirect_not_found_absolute',
    ],
    [
      'cache on a path rewrite',
      { rewrites: [{ source: '/a', destination: '/b', cache: 'shared' }] },
      'redirect_cache_invalid',
    ],
    [
      'bad query capture',
      { redirects: [{ source: '/a', destination: '/b', query: { q: '1x' } }] },
      'redirect_query_invalid',
    ],
    [
      'header forbidden',
      { headers: [{ source: '/*', headers: [{ key: 'Server', value: 'x' }] }] },
      'header_forbidden',
    ],
    ['header entry shape', { headers: [{ source: '/*', headers: [{ key: 'X-A' }] }] }, 'config_invalid'],
    ['firewall action', { firewall: [{ action: 'allow', match: { path: '/' } }] }, 'config_invalid'],
    ['firewall empty match', { firewall: [{ action: 'block', match: {} }] }, 'config_invalid'],
    [
      'firewall unknown attribute',
      { firewall: [{ action: 'block', match: { paths: '/' } }] },
      'config_invalid',
    ],
    [
      'firewall bad CIDR',
      { firewall: [{ action: 'block', match: { ip: '10.0.0.0/99' } }] },
      'config_invalid',
    ],
    [
      'firewall bad op',
      { firewall: [{ action: 'block', match: { path: { op: 'regex', value: '.*' } } }] },
      'config_invalid',
    ],
    [
      'firewall in without values',
      { firewall: [{ action: 'block', match: { path: { op: 'in' } } }] },
      'config_invalid',
    ],
    [
      'firewall status',
      { firewall: [{ action: 'block', status: 200, match: { path: '/' } }] },
      'config_invalid',
    ],
    [
      'firewall name',
      { firewall: [{ name: 'Bad Name', action: 'block', match: { path: '/' } }] },
      'config_invalid',
    ],
    ['index with slash', { index: 'a/index.html' }, 'config_invalid'],
    ['fallback 3xx', { fallback: { path: '/a', status: 301 } }, 'config_invalid'],
    ['fallback bad path', { fallback: '/../x' }, 'config_invalid'],
    [
      'too many bypass rules',
      { cache: { bypass: Array.from({ length: 51 }, () => ({ match: { path: '/' } })) } },
      'config_invalid',
    ],
  ];
  it.each(badConfig)('config: %s → %s', (_name, config, code) => {
    const r = compileSite({ files, config: config as never, configPath: 'spaces.jsonc' });
    expect(r.ok).toBe(false);
    expect(r.diagnostics[0]).toMatchObject({ code, severity: 'error', path: 'spaces.jsonc' });
    expect((r.diagnostics[0].details as { pointer: string }).pointer).toMatch(/^\//);
  });

  describe('header bytes (issue #17): every author source obeys the field grammar', () => {
    // [label, character(s), whether a URL destination percent-encodes it rather than refusing]
    const table: Array<[string, string, boolean]> = [
      ['CR', '\r', false],
      ['LF', '\n', false],
      ['NUL', '\u0000', false],
      ['U+0100', '\u0100', true],
      ['U+010D U+010A', '\u010d\u010aSet-Cookie:x=1;Domain=example.com', true],
      ['U+FFFF', '\uffff', true],
      ['astral', '\u{1F600}', true],
      ['U+2028', '\u2028', false],
      ['U+2029', '\u2029', false],
      ['obs-fold', '\r\n\tfolded', false],
    ];

    it.each(table)('config headers: %s is refused at the value', (_label, ch) => {
      const r = compileSite({
        files,
        configPath: 'spaces.json',
        config: { headers: [{ source: '/*', headers: [{ key: 'X-A', value: `a${ch}b` }] }] },
      });
      expect(r.ok).toBe(false);
      expect(r.diagnostics).toContainEqual(
        expect.objectContaining({
          code: 'header_value_invalid',
          path: 'spaces.json',
          details: { pointer: '/headers/0/headers/0/value' },
        }),
      );
      expect(r.rules.configHeaders).toEqual([]);
    });

    it.each(table)('_redirects and config destinations: %s', (_label, ch, encoded) => {
      const text = `/ok /fine 301\n/go /a${ch}b 301\n`;
      const file = compileSite({ files, redirectsText: text });
      const config = compileSite({
        files,
        config: { redirects: [{ source: '/go', destination: `/a${ch}b`, status: 301 }] },
      });
      if (!encoded) {
        expect(file.ok).toBe(false);
        // In the file a line break ends the rule: the rest is refused on the line it starts.
        const where = /\n/.test(ch) ? '_redirects:3' : '_redirects:2';
        expect(file.diagnostics.map((d) => d.path)).toContain(where);
        expect(config.ok).toBe(false);
        return;
      }
      // Non-ASCII in a URL is percent-encoded as browsers do: the Location carries ASCII only.
      for (const r of [file, config]) {
        expect(r.ok).toBe(true);
        const rule = r.rules.routes.find((x) => x.staticKey === '/go')!;
        const dest = rule.destination.join('');
        expect(dest).toMatch(/^\/a(%[0-9A-F]{2})+/);
        expect(dest).toMatch(/^[\x21-\x7e]+$/);
      }
    });

    it('an empty config header value is refused at its pointer; `_headers` the same at its line', () => {
      const r = compileSite({
        files,
        headersText: '/*\n  X-Ok: 1\n  X-Empty:\n',
        config: { headers: [{ source: '/*', headers: [{ key: 'X-A', value: ' ' }] }] },
      });
      expect(r.ok).toBe(false);
      expect(r.diagnostics).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ code: 'header_value_empty', path: '_headers:3' }),
          expect.objectContaining({
            code: 'header_value_empty',
            details: { pointer: '/headers/0/headers/0/value' },
          }),
        ]),
      );
    });

    it('an IDN destination host goes out in punycode', () => {
      const r = compileSite({ files, redirectsText: '/shop https://bücher.example/ä 302' });
      expect(r.ok).toBe(true);
      expect(r.rules.routes[0]!.destination).toEqual(['https://xn--bcher-kva.example/%C3%A4']);
    });
  });

  it('detects a root _shell.html as the SPA fallback on direct publishes only', () => {
    const withShell = [...files, ...entries(['_shell.html'])];
    expect(compileSite({ files: withShell, detectShell: true }).rules.settings).toMatchObject({
      fallback: { path: '/_shell.html', status: 200 },
      cleanUrls: false,
    });
    expect(compileSite({ files: withShell }).rules.settings.fallback).toBeNull();
    expect(
      compileSite({ files: withShell, detectShell: true, config: { fallback: '/404.html' } }).rules.settings
        .fallback,
    ).toEqual({ path: '/404.html', status: 200 });
  });

  it('a missing fallback file is a warning, not a failure', () => {
    const r = compileSite({ files, config: { fallback: '/nope.html' } });
    expect(r.ok).toBe(true);
    expect(r.diagnostics).toEqual([
      expect.objectContaining({ code: 'fallback_file_missing', severity: 'warning' }),
    ]);
  });

  it('warnings alone keep ok true; errors in either file make it false', () => {
    expect(codes({ files, headersText: '/*\n  Cache-Control: no-cache' }).ok).toBe(true);
    expect(codes({ files, headersText: '/*\n  Basic-Auth: a:b' }).ok).toBe(false);
    expect(codes({ files, redirectsText: '/a /b 302 Role=admin' }).ok).toBe(false);
  });
});

describe('config overlay recompilation', () => {
  it('keeps file rules, replaces config rules', () => {
    const base = compileSite({
      files,
      redirectsText: '/from-file /x 301',
      headersText: '/*\n  X-File: 1',
      config: { redirects: [{ source: '/old-config', destination: '/y' }], listing: false },
    });
    const effective = applyOverlay(
      { redirects: [{ source: '/old-config', destination: '/y' }], listing: false, cleanUrls: true },
      { redirects: [{ source: '/new-config', destination: '/z', status: 308 }], listing: true },
    );
    expect(effective).toEqual({
      redirects: [{ source: '/new-config', destination: '/z', status: 308 }],
      listing: true,
      cleanUrls: true,
    });
    const r = recompileWithConfig(base.rules, { files, config: effective });
    expect(r.ok).toBe(true);
    expect(r.rules.routes.map((x) => x.ref)).toEqual(['_redirects:1', 'redirects[0]']);
    expect(r.rules.routes[1].staticKey).toBe('/new-config');
    expect(r.rules.fileHeaders).toEqual(base.rules.fileHeaders);
    expect(r.rules.settings.listing).toBe(true);
    expect(applyOverlay(null, null)).toBeNull();
  });

  it('an overlay that closes a loop with a file rule is reported', () => {
    const base = compileSite({ files, redirectsText: '/a /b 301' });
    const r = recompileWithConfig(base.rules, {
      files,
      config: { redirects: [{ source: '/b', destination: '/a', status: 301 }] },
    });
    expect(r.ok).toBe(false);
    expect(r.diagnostics.map((d) => d.code)).toContain('redirect_loop');
  });
});
