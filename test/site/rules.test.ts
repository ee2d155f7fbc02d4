import { describe, expect, it } from 'vitest';
import { compileSite } from '../../src/site/compile.ts';
import { looksLikeAsset, manifestLookup, route } from '../../src/site/rules.ts';
import { entries, site } from '../edge/helpers.ts';

const WEB = [
  'index.html',
  'about.html',
  'docs/index.html',
  'docs/intro.html',
  'docs/404.html',
  'blog/post.html',
  'blog/post/index.html',
  'file.txt',
  'plain',
  'plain.html',
  '404.html',
  'assets/app.js',
  '_redirects',
  '_headers',
  'spaces.json',
  'spaces.jsonc',
  '.env',
  '.git/config',
  'sub/.secret',
  '.well-known/security.txt',
  '.well-known/.hidden',
  'data/a.csv',
  'data/b/c.txt',
];

describe('file resolution (website defaults: index.html, clean URLs on)', () => {
  const s = site(WEB);
  const table: Array<[string, string]> = [
    ['/', 'file:index.html 200'],
    ['/index.html', 'redirect:301 /'],
    ['/index.html?x=1', 'redirect:301 /?x=1'],
    ['/about', 'file:about.html 200'],
    ['/about.html', 'redirect:301 /about'],
    ['/about.html?ref=a%20b', 'redirect:301 /about?ref=a+b'],
    ['/about/', 'redirect:301 /about'],
    ['/docs', 'redirect:301 /docs/'],
    ['/docs/', 'file:docs/index.html 200'],
    ['/docs/index.html', 'redirect:301 /docs/'],
    ['/docs/intro', 'file:docs/intro.html 200'],
    ['/docs/missing', '404:docs/404.html'],
    ['/docs/deep/er/missing', '404:docs/404.html'],
    ['/missing', '404:404.html'],
    ['/file.txt', 'file:file.txt 200'],
    ['/file.txt/', 'redirect:301 /file.txt'],
    // A file literally named `plain` wins over `plain.html`; `/plain.html` must not redirect to it.
    ['/plain', 'file:plain 200'],
    ['/plain.html', 'file:plain.html 200'],
    // Both `blog/post.html` and `blog/post/index.html`: each URL serves without a redirect.
    ['/blog/post', 'file:blog/post.html 200'],
    ['/blog/post/', 'file:blog/post/index.html 200'],
    ['/assets/app.js', 'file:assets/app.js 200'],
    ['/assets/missing.js', '404:404.html'],
    // Compile inputs and dot-files are never served.
    ['/_redirects', '404:404.html'],
    ['/_headers', '404:404.html'],
    ['/spaces.json', '404:404.html'],
    ['/spaces.jsonc', '404:404.html'],
    ['/.env', '404:404.html'],
    ['/.git/config', '404:404.html'],
    ['/sub/.secret', '404:404.html'],
    ['/.well-known/security.txt', 'file:.well-known/security.txt 200'],
    ['/.well-known/.hidden', '404:404.html'],
    ['/data', '404:404.html'],
    ['/data/', '404:404.html'],
  ];
  it.each(table)('%s → %s', (url, want) => {
    expect(s.summary(url)).toBe(want);
  });

  it('only GET and HEAD get platform redirects', () => {
    expect(s.summary('/about.html', { method: 'POST' })).toBe('file:about.html 200');
    expect(s.summary('/docs', { method: 'OPTIONS' })).toBe('404:404.html');
    expect(s.summary('/about.html', { method: 'HEAD' })).toBe('redirect:301 /about');
  });

  it('never loops: following every redirect ends on content within two hops', () => {
    const urls = [
      ...table.map(([u]) => u),
      '/blog/post.html',
      '/docs/intro.html',
      '/docs/intro/',
      '/about.html/',
    ];
    for (const start of urls) {
      let url = start;
      const seen = new Set<string>();
      for (;;) {
        const d = s.go(url);
        if (d.type !== 'redirect') break;
        expect(seen.has(d.location), `${start} loops at ${d.location}`).toBe(false);
        seen.add(url);
        expect(seen.size).toBeLessThanOrEqual(2);
        url = d.location;
      }
    }
  });
});

describe('trailing-slash and clean-URL policy never loops (every file combination)', () => {
  const candidates = ['x', 'x.html', 'x/index.html', 'x/other.txt', 'index.html'];
  const urls = [
    '/x',
    '/x/',
    '/x.html',
    '/x.html/',
    '/x/index.html',
    '/x/index',
    '/',
    '/index.html',
    '/index',
  ];
  const settings = [
    {},
    { cleanUrls: false },
    { index: false as const },
    { listing: true },
    { index: false as const, listing: true },
    { fallback: '/index.html' },
  ];
  const combos: Array<[string[], Record<string, unknown>]> = [];
  for (let mask = 0; mask < 1 << candidates.length; mask++) {
    const present = candidates.filter((_, i) => mask & (1 << i));
    for (const cfg of settings) combos.push([present, cfg]);
  }
  it(`${combos.length} combinations × ${urls.length} URLs end on an answer within one redirect`, () => {
    for (const [present, cfg] of combos) {
      const s = site(present, { config: cfg });
      for (const start of urls) {
        const first = s.go(start);
        if (first.type !== 'redirect') continue;
        const second = s.go(first.location);
        expect(second.type, `${JSON.stringify({ present, cfg, start, to: first.location })}`).not.toBe(
          'redirect',
        );
      }
    }
  });
});

describe('settings', () => {
  it('cleanUrls: false serves only exact names', () => {
    const s = site(WEB, { config: { cleanUrls: false } });
    expect(s.summary('/about')).toBe('404:404.html');
    expect(s.summary('/about.html')).toBe('file:about.html 200');
    expect(s.summary('/index.html')).toBe('file:index.html 200');
    expect(s.summary('/about/')).toBe('404:404.html');
  });

  it('index: false disables directory indexes; listing shows directories', () => {
    const s = site(WEB, { config: { index: false, listing: true } });
    expect(s.summary('/')).toBe(
      'listing:/ .well-known/,assets/,blog/,data/,docs/,404.html,about.html,file.txt,index.html,plain,plain.html',
    );
    expect(s.summary('/data')).toBe('redirect:301 /data/');
    expect(s.summary('/data/')).toBe('listing:/data/ b/,a.csv');
    expect(s.summary('/docs/')).toBe('listing:/docs/ 404.html,index.html,intro.html');
    // With indexes off, index.html is an ordinary page: its clean URL is /index.
    expect(s.summary('/index.html')).toBe('redirect:301 /index');
    expect(s.summary('/index')).toBe('file:index.html 200');
    expect(s.summary('/nope/')).toBe('404:404.html');
  });

  it('a custom index name', () => {
    const s = site(['home.htm', 'a/home.htm'], { config: { index: 'home.htm' } });
    expect(s.summary('/')).toBe('file:home.htm 200');
    expect(s.summary('/a')).toBe('redirect:301 /a/');
    expect(s.summary('/a/')).toBe('file:a/home.htm 200');
    expect(s.summary('/a/home.htm')).toBe('file:a/home.htm 200');
  });

  it('SPA fallback: 200 shell for routes, never for missing assets; clean URLs off by default', () => {
    const s = site(['index.html', 'about.html', 'assets/app.js', '404.html'], {
      config: { fallback: '/index.html' },
    });
    expect(s.summary('/dashboard/settings')).toBe('file:index.html 200');
    expect(s.summary('/user/jane.doe')).toBe('file:index.html 200');
    expect(s.summary('/about')).toBe('file:index.html 200');
    expect(s.summary('/about.html')).toBe('file:about.html 200');
    expect(s.summary('/assets/app-3f9a.js')).toBe('404:404.html');
    expect(s.summary('/assets/logo.png')).toBe('404:404.html');
    expect(s.summary('/assets/app.js')).toBe('file:assets/app.js 200');
  });

  it('SPA fallback with cleanUrls forced on', () => {
    const s = site(['index.html', 'about.html'], { config: { fallback: '/index.html', cleanUrls: true } });
    expect(s.summary('/about')).toBe('file:about.html 200');
    expect(s.summary('/x')).toBe('file:index.html 200');
  });

  it('fallback object with a status', () => {
    const s = site(['index.html', 'gone.html'], {
      config: { fallback: { path: '/gone.html', status: 410 } },
    });
    expect(s.summary('/old')).toBe('file:gone.html 410');
    expect(s.summary('/old.css')).toBe('file:gone.html 410');
  });

  it('no 404.html anywhere → a bare not found', () => {
    expect(site(['index.html']).summary('/x')).toBe('404:none');
  });

  it('the fallback cannot reach a hidden file', () => {
    const s = site(['index.html', '.env'], { config: { fallback: '/.env' } });
    expect(s.summary('/x')).toBe('404:none');
  });
});

describe('looksLikeAsset', () => {
  it.each([
    ['/a.js', true],
    ['/a/b.CSS', true],
    ['/img/x.webp', true],
    ['/about', false],
    ['/page.html', false],
    ['/user/jane.doe', false],
    ['/.js', false],
  ])('%s → %s', (p, want) => {
    expect(looksLikeAsset(p)).toBe(want);
  });
});

describe('redirects and rewrites', () => {
  const files = [
    'index.html',
    'app/index.html',
    'real.html',
    'real/x.html',
    'docs/404.html',
    '404.html',
    'shadow.html',
  ];
  const s = site(files, {
    redirectsText: [
      '/old /new 301',
      '/gone /new',
      '/news/* /blog/:splat 301',
      '/u/:id/profile /people/:id 308',
      '/search q=:term /find?term=:term 302',
      '/tag t=:t p=:p /tags/:t/:p 301',
      '/lit id=7 /seven 301',
      '/app/* /app/index.html 200',
      '/real /elsewhere.html 200',
      '/real/x /index.html 200!',
      '/shadow /index.html 404',
      '/forced-404 /docs/404.html 404!',
      '/api/* https://api.example.com/v1/:splat 200',
      '/cached/* https://cdn.example.com/:splat 200 cache=shared',
      '/fr/* /fr-site/:splat 302 Country=fr,be',
      '/lang /en 302 Language=en',
      '/beta /beta-on 302 Cookie=beta,preview',
      '/llms /llms.txt 302 Agent=true',
      'https://docs.site.example/* https://site.example/docs/:splat 301',
      'https://:sub.site.example/hi /hello-:sub 302',
      '/ext https://example.org/landing 302',
      '/ext-q https://example.org/landing?src=x 302',
      '/frag /page#section 302',
      '/first /one 302',
      '/first /two 302',
    ].join('\n'),
    config: {
      redirects: [{ source: '/cfg', destination: '/from-config', status: 301 }],
      rewrites: [
        { source: '/rw/:slug', destination: '/real.html' },
        { source: '/nf/*', destination: '/docs/404.html', notFound: true },
        { source: '/prox/*', destination: 'https://up.example.net/:splat', cache: 'shared' },
      ],
    },
  });
  const table: Array<[string, string, Record<string, unknown>?]> = [
    ['/old', 'redirect:301 /new'],
    ['/old/', 'redirect:301 /new'],
    ['/old?utm=1&x=2', 'redirect:301 /new?utm=1&x=2'],
    ['/gone', 'redirect:302 /new'],
    ['/news', 'redirect:301 /blog/'],
    ['/news/2024/a b', 'redirect:301 /blog/2024/a%20b'],
    ['/news/x/', 'redirect:301 /blog/x/'],
    ['/u/42/profile', 'redirect:308 /people/42'],
    ['/u/42', '404:404.html'],
    ['/search?q=cats', 'redirect:302 /find?term=cats'],
    ['/search?q=a&q=b', 'redirect:302 /find?term=a,b'],
    ['/search?q=cats&extra=1', '404:404.html'],
    ['/search', '404:404.html'],
    ['/tag?p=2&t=x', 'redirect:301 /tags/x/2'],
    ['/tag?t=x', '404:404.html'],
    ['/lit?id=7', 'redirect:301 /seven'],
    ['/lit?id=8', '404:404.html'],
    ['/app/settings/profile', 'file:app/index.html 200'],
    ['/app/', 'file:app/index.html 200'],
    // Shadowing: a real file beats a non-forced rewrite or 404 rule, not a forced one.
    ['/real', 'file:real.html 200'],
    ['/real/x', 'file:index.html 200'],
    ['/shadow', 'file:shadow.html 200'],
    ['/forced-404', 'file:docs/404.html 404'],
    ['/api/users?id=1', 'proxy:https://api.example.com/v1/users?id=1'],
    ['/cached/a.js', 'proxy:https://cdn.example.com/a.js shared'],
    ['/fr/x', '404:404.html'],
    ['/fr/x', 'redirect:302 /fr-site/x', { country: 'BE' }],
    ['/fr/x', 'redirect:302 /fr-site/x', { country: 'fr' }],
    ['/lang', '404:404.html'],
    ['/lang', 'redirect:302 /en', { headers: { 'accept-language': 'en-GB,en;q=0.8' } }],
    ['/lang', '404:404.html', { headers: { 'accept-language': 'de, en;q=0' } }],
    ['/beta', '404:404.html'],
    ['/beta', 'redirect:302 /beta-on', { cookies: { preview: '1' } }],
    ['/llms', '404:404.html'],
    ['/llms', 'redirect:302 /llms.txt', { headers: { 'user-agent': 'curl/8.4.0' } }],
    ['/llms', 'redirect:302 /llms.txt', { headers: { 'user-agent': 'Mozilla/5.0 ClaudeBot/1.0' } }],
    [
      '/llms',
      'redirect:302 /llms.txt',
      { headers: { 'user-agent': 'Mozilla/5.0', accept: 'text/markdown' } },
    ],
    ['/llms', 'redirect:302 /llms.txt', { headers: {} }],
    ['http://docs.site.example/a/b', 'redirect:301 https://site.example/docs/a/b'],
    ['http://docs.site.example:8080/a', 'redirect:301 https://site.example/docs/a'],
    ['http://en.site.example/hi', 'redirect:302 /hello-en'],
    ['http://a.b.site.example/hi', '404:404.html'],
    ['/ext?x=1', 'redirect:302 https://example.org/landing?x=1'],
    ['/ext-q?x=1', 'redirect:302 https://example.org/landing?src=x'],
    ['/frag?a=1', 'redirect:302 /page?a=1#section'],
    ['/first', 'redirect:302 /one'],
    ['/cfg', 'redirect:301 /from-config'],
    ['/rw/anything', 'file:real.html 200'],
    ['/nf/a', 'file:docs/404.html 404'],
    ['/prox/x?y=1', 'proxy:https://up.example.net/x?y=1 shared'],
  ];
  it.each(table)('%s → %s %j', (url, want, extra) => {
    expect(s.summary(url, extra as never)).toBe(want);
  });

  it('_redirects rules come before config redirects, which come before rewrites', () => {
    const t = site(['index.html', 'a.html', 'b.html'], {
      redirectsText: '/x /from-file 302',
      config: {
        redirects: [
          { source: '/x', destination: '/from-config' },
          { source: '/y', destination: '/redirected' },
        ],
        rewrites: [
          { source: '/y', destination: '/a.html' },
          { source: '/z', destination: '/b.html' },
        ],
      },
    });
    expect(t.summary('/x')).toBe('redirect:302 /from-file');
    expect(t.summary('/y')).toBe('redirect:302 /redirected');
    expect(t.summary('/z')).toBe('file:b.html 200');
  });

  it('a rewrite to a missing file is a 404 with the nearest 404 page, not a re-route', () => {
    const t = site(['index.html', '404.html'], { redirectsText: '/a /missing.html 200' });
    expect(t.summary('/a')).toBe('404:404.html');
  });

  it('rewrites never serve hidden files', () => {
    const t = site(['index.html', '.env', 'spaces.json'], {
      redirectsText: '/leak /.env 200!\n/conf /spaces.json 200!',
    });
    expect(t.summary('/leak')).toBe('404:none');
    expect(t.summary('/conf')).toBe('404:none');
  });
});

describe('open redirects', () => {
  const s = site(['index.html', 'dir/index.html'], {
    redirectsText: [
      '/go/* /:splat 302',
      '/to/:where /:where 302',
      '/out/* /x/:splat 301',
      // Author slips: the capture sits right after the host. It must still never leave example.com.
      '/ext/* https://example.com:splat 302',
      '/ext2/:p https://example.com:p 302',
      '/l/:lang https://:lang.example.com/ 302',
    ].join('\n'),
  });
  const corpus = [
    '//evil.com',
    '//evil.com/',
    '///evil.com',
    '/go//evil.com',
    '/go///evil.com/%2e%2e',
    '/go/%2fevil.com',
    '/go/%5cevil.com',
    '/go/%09/evil.com',
    '/go/%E3%80%82evil.com',
    '/to/%2f%2fevil.com',
    '/to/evil.com%40good',
    '/out//evil.com',
    '/dir',
    '//dir',
    '/dir//',
    '/index.html',
    '//evil.com/index.html',
    '/%2f%2fevil.com',
    '/%5c%5cevil.com',
    '/\\evil.com',
    '/ext/@evil.com',
    '/ext/.evil.com',
    '/ext2/@evil.com',
    '/ext/%40evil.com/x',
  ];
  it('a capture that would move an absolute destination to another host is refused', () => {
    expect(s.summary('/ext/@evil.com')).toBe('404:none');
    expect(s.summary('/ext/.evil.com')).toBe('404:none');
    expect(s.summary('/ext2/-docs')).toBe('redirect:302 https://example.com-docs');
    expect(s.summary('/l/de')).toBe('redirect:302 https://de.example.com/');
    expect(s.summary('/l/evil.com@x')).toBe('404:none');
  });

  it.each(corpus)('%s never redirects off-site', (raw) => {
    let d: ReturnType<typeof s.go> | null = null;
    try {
      d = s.go(raw);
    } catch {
      // Refused at normalisation (400 at the edge): nothing is redirected at all.
      return;
    }
    if (d.type === 'redirect') {
      const host = new URL(d.location, 'https://site.example').host;
      if (['_redirects:4', '_redirects:5', '_redirects:6'].includes(d.rule ?? '')) {
        expect(host.endsWith('example.com')).toBe(true);
      } else {
        expect(d.location.startsWith('/')).toBe(true);
        expect(d.location.startsWith('//')).toBe(false);
        expect(d.location.startsWith('/\\')).toBe(false);
        expect(host).toBe('site.example');
      }
    }
  });
});

describe('headers', () => {
  const s = site(['index.html', 'a/b.html', 'a/404.html', 'app.js', 'shell.html'], {
    redirectsText: '/alias /a/b.html 200\n/r /a/b 301\n/api/* https://up.example.com/:splat 200',
    headersText: [
      '/*',
      '  X-Frame-Options: DENY',
      '  X-Multi: one',
      '/a/*',
      '  X-Multi: two',
      '  X-Section: a',
      '/a/:page',
      '  X-Page: :page',
      '  ! X-Frame-Options',
      '/a/keep',
      '  X-Frame-Options: SAMEORIGIN',
      '/alias',
      '  X-Alias: yes',
      '/*',
      '  Set-Cookie: a=1; Path=/',
      '  Set-Cookie: b=2; Path=/',
    ].join('\n'),
    config: {
      headers: [
        {
          source: '/*',
          headers: [
            { key: 'X-Frame-Options', value: 'from-config' },
            { key: 'X-Config', value: 'c' },
            { key: 'X-Robots-Tag', remove: true },
          ],
        },
      ],
    },
  });

  it('applies every matching block in order on the original path; file wins per name', () => {
    const d = s.go('/a/b');
    expect(d.type).toBe('file');
    if (d.type !== 'file') return;
    expect(d.headers).toEqual({
      'X-Config': 'c',
      'X-Multi': 'one, two',
      'X-Section': 'a',
      'X-Page': 'b',
      'Set-Cookie': ['a=1; Path=/', 'b=2; Path=/'],
    });
    expect(d.removeHeaders).toEqual(['X-Robots-Tag', 'X-Frame-Options']);
  });

  it('captures in header values are percent-encoded', () => {
    const d = s.go('/a/caf%C3%A9');
    if (d.type !== 'notFound') throw new Error(d.type);
    expect(d.headers['X-Page']).toBe('caf%C3%A9');
  });

  it('a later set re-adds a removed header', () => {
    const d = s.go('/a/keep');
    if (d.type !== 'notFound') throw new Error(d.type);
    expect(d.entry?.path).toBe('a/404.html');
    expect(d.headers['X-Frame-Options']).toBe('SAMEORIGIN');
    expect(d.removeHeaders).toEqual(['X-Robots-Tag']);
  });

  it('rewrites use the headers of the requested path', () => {
    const d = s.go('/alias');
    if (d.type !== 'file') throw new Error(d.type);
    expect(d.entry.path).toBe('a/b.html');
    expect(d.headers['X-Alias']).toBe('yes');
    expect(d.headers['X-Section']).toBeUndefined();
  });

  it('redirects and proxies carry no custom headers', () => {
    for (const url of ['/r', '/api/x']) {
      const d = s.go(url);
      expect(['redirect', 'proxy']).toContain(d.type);
      expect('headers' in d).toBe(false);
    }
  });
});

describe('what a destination gets substituted', () => {
  const redirectsText = [
    '/ url=:url /get?url=:url 302',
    '/seg/:name /people/:name 302',
    '/files/* /store/:splat 302',
    '/q q=:q /docs/:q 302',
    '/rw q=:q /pages/:q 200',
    '/api q=:q https://api.example.com/echo?q=:q 200',
    '/item w=:w https://api.example.com/v1/items/:w 200',
    '/up/* https://api.example.com/v1/:splat 200',
    '/frag /page#a?b 302',
    '/frag-q /page?k=1#a?b 302',
    '/frag-cap q=:q /page#s-:q 302',
    '/sub/:lang https://:lang.example.com/ 302',
  ].join('\n');
  const s = site(['index.html', '404.html', 'pages/a.html'], {
    redirectsText,
    config: {
      redirects: [{ source: '/cfg', destination: '/x#y?z', status: 301 }],
      rewrites: [{ source: '/cfg-up', destination: 'https://api.example.com/x#y?z' }],
    },
  });
  const table: Array<[string, string]> = [
    ['/?url=x%26admin%3D1', 'redirect:302 /get?url=x%26admin%3D1'],
    ['/?url=a%2Bb+c%23d%3Be', 'redirect:302 /get?url=a%2Bb%20c%23d%3Be'],
    ['/seg/a%3Fb%23c', 'redirect:302 /people/a%3Fb%23c'],
    ['/files/a/b%3Fc%23d', 'redirect:302 /store/a/b%3Fc%23d'],
    ['/q?q=a%2Fb%3Fc%23d', 'redirect:302 /docs/a%2Fb%3Fc%23d'],
    ['/q?q=..', '404:404.html'],
    ['/q?q=.', '404:404.html'],
    ['/rw?q=a.html', 'file:pages/a.html 200'],
    ['/rw?q=..', '404:404.html'],
    ['/rw?q=../index.html', '404:404.html'],
    ['/api?q=x%26admin%3D1', 'proxy:https://api.example.com/echo?q=x%26admin%3D1'],
    ['/item?w=a%2Fb', 'proxy:https://api.example.com/v1/items/a%2Fb'],
    ['/item?w=..', '404:404.html'],
    ['/up/a%3Fb/c%23d', 'proxy:https://api.example.com/v1/a%3Fb/c%23d'],
    // `?` inside the fragment is part of it: the request's query goes in before the `#`.
    ['/frag?x=1', 'redirect:302 /page?x=1#a?b'],
    ['/frag', 'redirect:302 /page#a?b'],
    ['/frag-q?x=1', 'redirect:302 /page?k=1#a?b'],
    ['/frag-cap?q=a%20b%23c', 'redirect:302 /page#s-a%20b%23c'],
    ['/cfg?a=1', 'redirect:301 /x?a=1#y?z'],
    ['/cfg-up?a=1', 'proxy:https://api.example.com/x?a=1#y?z'],
    ['/sub/de', 'redirect:302 https://de.example.com/'],
  ];
  it.each(table)('%s → %s', (url, want) => {
    expect(s.summary(url)).toBe(want);
  });

  it('rules stored by an earlier release (format 1) are served the same way', () => {
    const files = entries(['index.html', '404.html']);
    const compiled = compileSite({ files, redirectsText });
    // What format 1 stored: captures without positions, a `?` anywhere counted as a query.
    const old = JSON.parse(JSON.stringify(compiled.rules));
    old.format = 1;
    for (const r of old.routes) {
      r.destination = r.destination.map((p: unknown) =>
        typeof p === 'string' ? p : { cap: (p as { cap: string }).cap },
      );
      r.destinationHasQuery = r.destination.some((p: unknown) => typeof p === 'string' && p.includes('?'));
      r.authorityCaptures = [];
    }
    const go = (url: string) => {
      const u = new URL(url, 'http://site.example');
      return route(
        {
          method: 'GET',
          path: u.pathname,
          query: u.searchParams,
          host: 'site.example',
          headers: {},
          cookies: {},
          ip: '203.0.113.9',
        },
        old,
        manifestLookup(files),
      );
    };
    expect(go('/?url=x%26admin%3D1')).toMatchObject({ location: '/get?url=x%26admin%3D1' });
    expect(go('/frag?x=1')).toMatchObject({ location: '/page?x=1#a?b' });
    expect(go('/q?q=..')).toMatchObject({ type: 'notFound' });
    expect(go('/sub/x.evil.com')).toMatchObject({ type: 'notFound' });
  });
});

describe('a rule that sends a request to itself', () => {
  // Without the space's hostnames at compile time (rules compiled before a rename, a custom domain
  // added later), the engine still sees a redirect or proxy back to the very URL it was asked for.
  const s = site(['index.html', 'c.html'], {
    redirectsText: [
      '/a https://site.example/a 301',
      '/port http://SITE.example:8080/port 302',
      '/q q=:q https://site.example/q?q=:q 301',
      '/frag https://site.example/frag#x 301',
      '/p https://site.example/p 200',
      '/b https://site.example/c 301',
      '/x https://other.example/x 301',
    ].join('\n'),
  });
  const table: Array<[string, string]> = [
    ['/a', 'loop:https://site.example/a'],
    ['/a?x=1', 'loop:https://site.example/a?x=1'],
    ['/port', 'loop:http://SITE.example:8080/port'],
    ['/q?q=1', 'loop:https://site.example/q?q=1'],
    ['/frag', 'loop:https://site.example/frag#x'],
    ['/p', 'loop:https://site.example/p'],
    ['/b', 'redirect:301 https://site.example/c'],
    ['/x', 'redirect:301 https://other.example/x'],
    ['http://other.example/a', 'redirect:301 https://site.example/a'],
  ];
  it.each(table)('%s → %s', (url, want) => {
    expect(s.summary(url)).toBe(want);
  });
});
