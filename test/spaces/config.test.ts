import { describe, expect, it } from 'vitest';
import { canonicalJson, settingsDigest } from '../../src/domain/spaces/settings-digest.ts';
import {
  MAX_CONFIG_BYTES,
  normalizeDataSourceUrl,
  validateSpaceConfig,
} from '../../src/domain/spaces/settings-overlay.ts';
import { compileWildcard, WILDCARD_MAX_STARS } from '../../src/domain/spaces/wildcard.ts';
import { statusOf } from '../../src/errors/catalog.ts';
import { ApiError } from '../../src/errors/problem.ts';
import { getSchema } from '../../src/schemas/registry.ts';
import { SpaceConfig } from '../../src/schemas/space-config.ts';

function failure(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected a validation failure, got success');
}

const s = (n: number, c = 'a') => c.repeat(n);
const fw = (rule: Record<string, unknown>) => ({ firewall: [rule] });
const block = (match: Record<string, unknown>) => fw({ action: 'block', match });
const ipMatch = (ip: unknown) => block({ ip });
const bypass = (rule: Record<string, unknown>) => ({ cache: { bypass: [rule] } });
const redirect = (rule: Record<string, unknown>) => ({ redirects: [rule] });
const rewrite = (rule: Record<string, unknown>) => ({ rewrites: [rule] });
const header = (h: Record<string, unknown>, source = '/*') => ({ headers: [{ source, headers: [h] }] });
const ds = (url: string) => ({ dataSources: { cms: { kind: 'cms', url } } });
const users = (u: Record<string, unknown>) => ({ users: u });
const goodUsers = {
  enabled: true,
  providers: {
    identityProvider: { mode: 'oidc', clientId: 'abc' },
    avatarProvider: { enabled: true },
    service: { enabled: false },
  },
};

/** [what, config] — each must pass. */
const valid: Array<[string, unknown]> = [
  ['empty overlay', {}],
  ['index string', { index: 'home.html' }],
  ['index false', { index: false }],
  ['fallback string', { fallback: '/index.html' }],
  ['fallback object', { fallback: { path: '/404.html', status: 404 } }],
  ['fallback status 100 and 599', { fallback: { path: '/x', status: 599 } }],
  ['cleanUrls, listing, markdownNegotiation', { cleanUrls: false, listing: true, markdownNegotiation: true }],
  ['meta at its bounds', { meta: { title: s(300), description: s(1000), image: s(2000), favicon: s(2000) } }],
  [
    'superpowers in full',
    {
      superpowers: {
        enabled: true,
        disable_all_injection: false,
        vendorAnalytics: { enabled: true, measurementId: s(64) },
        vendorTagManager: { enabled: false, containerId: s(64) },
        javascriptTags: Array.from({ length: 16 }, (_, i) => ({
          id: `${i}${s(120)}`,
          name: s(160),
          enabled: true,
          code: s(8192),
        })),
        tags: {
          inheritance: {
            inherited: true,
            overrides: Array.from({ length: 128 }, (_, i) => ({
              tagId: `t${i}`,
              reason: i % 2 ? null : s(500),
            })),
          },
          requireReview: true,
        },
      },
    },
  ],
  ['100 templates', { templates: Array.from({ length: 100 }, (_, i) => `/t${i}.html`) }],
  ['theme hex 3', { theme: { accent: '#abc' } }],
  ['theme hex 4', { theme: { accent: '#abcd' } }],
  ['theme hex 6', { theme: { accent: '#A0B1C2' } }],
  ['theme hex 8', { theme: { background: '#a0b1c2d3' } }],
  ['theme rgb', { theme: { accent: 'rgb(10, 20, 30)' } }],
  ['theme rgba', { theme: { accent: 'rgba(10,20,30,0.5)' } }],
  ['theme rgb space form', { theme: { accent: 'rgb(10 20 30 / 50%)' } }],
  ['theme hsl', { theme: { accent: 'hsl(120deg, 50%, 40%)' } }],
  ['theme hsla', { theme: { background: 'hsla(120, 50%, 40%, .3)' } }],
  ['theme colour name', { theme: { accent: 'rebeccapurple' } }],
  ['theme name of 3 and 30 letters', { theme: { accent: 'red', background: s(30, 'b') } }],
  ['theme logo https', { theme: { logo: 'https://cdn.example/logo.svg' } }],
  ['theme logo root-relative', { theme: { logo: '/assets/logo.svg' } }],
  ['theme name 120', { theme: { name: s(120) } }],
  ['theme font', { theme: { font: `"Inter", 'Noto Sans', sans-serif 2` } }],
  ['theme font with non-ASCII letters', { theme: { font: 'Ünïcode Grotesk' } }],
  ['theme hideServiceBranding', { theme: { hideServiceBranding: true } }],
  ['collab default', { collab: { ui: 'default' } }],
  ['collab custom', { collab: { ui: 'custom' } }],
  [
    'build in full',
    {
      build: {
        rootDirectory: 'app',
        installDirectory: null,
        installCommand: 'npm ci',
        buildCommand: 'npm run build',
        outputDirectory: 'dist',
        ignoredBuildCommand: null,
        frameworkPreset: 'vite',
        platformPreset: null,
        allowUnsupportedPlatformFeatures: false,
        timeoutSeconds: 60,
      },
    },
  ],
  ['build timeout 7200', { build: { timeoutSeconds: 7200 } }],
  ['placement', { placement: { burstable: true, edge: false } }],
  [
    'firewall block with status',
    fw({ name: 'no-bots_1', action: 'block', status: 451, match: { userAgent: '*bot*' } }),
  ],
  [
    'firewall challenge',
    fw({ action: 'challenge', description: 'x', match: { country: ['RU', 'KP'] }, any: true }),
  ],
  ['firewall rule name of 61', fw({ name: s(61), action: 'block', match: { path: '/admin' } })],
  [
    'every scalar match attribute',
    block({
      path: '/a',
      host: 'x.example',
      method: 'POST',
      ip: '10.0.0.1',
      country: 'DE',
      asn: '64512',
      userAgent: 'curl*',
      referer: '*',
      extension: 'php',
      ja3: 'abc',
      ja4: 'def',
    }),
  ],
  [
    'header, cookie and query matches',
    block({ header: { 'X-Api': 'k*' }, cookie: { session: { op: 'exists' } }, query: { debug: '1' } }),
  ],
  ['ip CIDR string', ipMatch('192.168.0.0/16')],
  ['ip IPv6 and CIDR list', ipMatch(['2001:db8::1', '2001:db8::/32'])],
  ['clause eq', ipMatch({ op: 'eq', value: '10.0.0.1' })],
  ['clause neq not', block({ method: { op: 'neq', value: 'GET', not: true } })],
  ['clause in', ipMatch({ op: 'in', values: ['10.0.0.1', '10.1.0.0/16'] })],
  ['clause inCidr', ipMatch({ op: 'inCidr', values: ['10.0.0.0/8', '::1/128'] })],
  ['clause contains', block({ userAgent: { op: 'contains', value: 'bot' } })],
  ['clause startsWith', block({ path: { op: 'startsWith', value: '/wp-' } })],
  ['clause endsWith', block({ path: { op: 'endsWith', value: '.php' } })],
  ['clause wildcard', block({ path: { op: 'wildcard', value: '/a/*/b*' } })],
  ['clause wildcard on ip', ipMatch({ op: 'wildcard', value: '10.0.*' })],
  ['clause exists', block({ header: { authorization: { op: 'exists', not: true } } })],
  ['wildcard with the most stars', block({ path: `/${'*a'.repeat(WILDCARD_MAX_STARS)}` })],
  [
    'cache bypass',
    bypass({ name: 'api', description: 'no cache for api', match: { path: '/api/*' }, any: false }),
  ],
  [
    '50 cache bypass rules',
    { cache: { bypass: Array.from({ length: 50 }, () => ({ match: { path: '/x' } })) } },
  ],
  ['redirect minimal', redirect({ source: '/old', destination: '/new' })],
  [
    'redirect in full',
    redirect({
      source: '/blog/:year/:slug',
      destination: 'https://blog.example/:year/:slug',
      status: 308,
      force: true,
      query: { id: ':id' },
    }),
  ],
  ['redirect splat', redirect({ source: '/docs/*', destination: '/manual/:splat', status: 301 })],
  [
    'redirect from a host pattern',
    redirect({ source: 'https://*.example.com/*', destination: 'https://example.com/:splat' }),
  ],
  [
    'redirect destination with a variable',
    redirect({ source: '/a', destination: 'https://{{ vars.API_HOST }}/x/{{vars.V}}' }),
  ],
  ['rewrite to a path', rewrite({ source: '/app/*', destination: '/app/index.html' })],
  [
    'rewrite proxy with cache',
    rewrite({ source: '/api/*', destination: 'https://api.example/:splat', cache: 'shared' }),
  ],
  ['rewrite notFound path', rewrite({ source: '/gone/*', destination: '/404.html', notFound: true })],
  ['header set', header({ key: 'X-Frame-Options', value: 'DENY' })],
  ['header remove', header({ key: 'X-Powered-By', remove: true })],
  ['header Cache-Control (allowed, honoured verbatim)', header({ key: 'Cache-Control', value: 'no-store' })],
  ['header Proxy-lookalike', header({ key: 'X-Proxy-Id', value: '1' })],
  ['header value with a tab', header({ key: 'X-Note', value: 'a\tb' })],
  ['users', users(goodUsers)],
  ['dataSources with default', { ...ds('https://cms.example/api'), defaultDataSource: 'cms' }],
  [
    '32 dataSources, names at the rule bounds',
    {
      dataSources: Object.fromEntries(
        Array.from({ length: 32 }, (_, i) => [
          i === 0 ? `_${s(127)}` : `s${i}`,
          { kind: 'cms', url: `https://cms${i}.example` },
        ]),
      ),
    },
  ],
];

/** [what, config, pointer] — each must fail with 400 validation_error at exactly that pointer. */
const invalid: Array<[string, unknown, string]> = [
  ['not an object', 'nope', '/config'],
  ['unknown top-level key', { colour: 'red' }, '/config/colour'],
  ['index empty', { index: '' }, '/config/index'],
  ['index true', { index: true }, '/config/index'],
  ['fallback empty', { fallback: '' }, '/config/fallback'],
  ['fallback status 99', { fallback: { path: '/x', status: 99 } }, '/config/fallback/status'],
  ['fallback status 600', { fallback: { path: '/x', status: 600 } }, '/config/fallback/status'],
  ['fallback without status', { fallback: { path: '/x' } }, '/config/fallback/status'],
  ['fallback extra key', { fallback: { path: '/x', status: 200, x: 1 } }, '/config/fallback/x'],
  ['cleanUrls not boolean', { cleanUrls: 'yes' }, '/config/cleanUrls'],
  ['listing not boolean', { listing: 1 }, '/config/listing'],
  ['markdownNegotiation not boolean', { markdownNegotiation: 'on' }, '/config/markdownNegotiation'],
  ['meta title empty', { meta: { title: '' } }, '/config/meta/title'],
  ['meta title 301', { meta: { title: s(301) } }, '/config/meta/title'],
  ['meta description 1001', { meta: { description: s(1001) } }, '/config/meta/description'],
  ['meta image 2001', { meta: { image: s(2001) } }, '/config/meta/image'],
  ['meta favicon 2001', { meta: { favicon: s(2001) } }, '/config/meta/favicon'],
  ['meta unknown', { meta: { keywords: 'x' } }, '/config/meta/keywords'],
  ['superpowers unknown', { superpowers: { enable: true } }, '/config/superpowers/enable'],
  ['superpowers enabled type', { superpowers: { enabled: 'yes' } }, '/config/superpowers/enabled'],
  [
    'disable_all_injection type',
    { superpowers: { disable_all_injection: 1 } },
    '/config/superpowers/disable_all_injection',
  ],
  [
    'measurementId 65',
    { superpowers: { vendorAnalytics: { measurementId: s(65) } } },
    '/config/superpowers/vendorAnalytics/measurementId',
  ],
  [
    'vendorAnalytics unknown',
    { superpowers: { vendorAnalytics: { id: 'x' } } },
    '/config/superpowers/vendorAnalytics/id',
  ],
  [
    'containerId 65',
    { superpowers: { vendorTagManager: { containerId: s(65) } } },
    '/config/superpowers/vendorTagManager/containerId',
  ],
  [
    '17 javascript tags',
    { superpowers: { javascriptTags: Array.from({ length: 17 }, () => ({ code: 'x' })) } },
    '/config/superpowers/javascriptTags',
  ],
  [
    'javascript tag without code',
    { superpowers: { javascriptTags: [{ id: 'a' }] } },
    '/config/superpowers/javascriptTags/0/code',
  ],
  [
    'javascript tag code 8193',
    { superpowers: { javascriptTags: [{ code: s(8193) }] } },
    '/config/superpowers/javascriptTags/0/code',
  ],
  [
    'javascript tag id 129',
    { superpowers: { javascriptTags: [{ code: 'x', id: s(129) }] } },
    '/config/superpowers/javascriptTags/0/id',
  ],
  [
    'javascript tag name 161',
    { superpowers: { javascriptTags: [{ code: 'x', name: s(161) }] } },
    '/config/superpowers/javascriptTags/0/name',
  ],
  [
    'javascript tag unknown',
    { superpowers: { javascriptTags: [{ code: 'x', src: 'y' }] } },
    '/config/superpowers/javascriptTags/0/src',
  ],
  [
    '129 overrides',
    {
      superpowers: {
        tags: { inheritance: { overrides: Array.from({ length: 129 }, () => ({ tagId: 't' })) } },
      },
    },
    '/config/superpowers/tags/inheritance/overrides',
  ],
  [
    'override without tagId',
    { superpowers: { tags: { inheritance: { overrides: [{ disabled: true }] } } } },
    '/config/superpowers/tags/inheritance/overrides/0/tagId',
  ],
  [
    'override tagId empty',
    { superpowers: { tags: { inheritance: { overrides: [{ tagId: '' }] } } } },
    '/config/superpowers/tags/inheritance/overrides/0/tagId',
  ],
  [
    'override reason 501',
    { superpowers: { tags: { inheritance: { overrides: [{ tagId: 't', reason: s(501) }] } } } },
    '/config/superpowers/tags/inheritance/overrides/0/reason',
  ],
  [
    'inheritance unknown',
    { superpowers: { tags: { inheritance: { x: 1 } } } },
    '/config/superpowers/tags/inheritance/x',
  ],
  [
    'requireReview type',
    { superpowers: { tags: { requireReview: 'no' } } },
    '/config/superpowers/tags/requireReview',
  ],
  ['101 templates', { templates: Array.from({ length: 101 }, () => 'a') }, '/config/templates'],
  ['empty template', { templates: ['a', ''] }, '/config/templates/1'],
  ['theme hex 5', { theme: { accent: '#abcde' } }, '/config/theme/accent'],
  ['theme hex without #', { theme: { accent: 'abcdef0' } }, '/config/theme/accent'],
  ['theme hex bad digit', { theme: { accent: '#ggg' } }, '/config/theme/accent'],
  ['theme rgb two args', { theme: { accent: 'rgb(1,2)' } }, '/config/theme/accent'],
  ['theme unknown function', { theme: { accent: 'lab(50% 40 59)' } }, '/config/theme/accent'],
  ['theme url injection', { theme: { background: 'url(x)' } }, '/config/theme/background'],
  ['theme css injection', { theme: { background: 'red;x:y' } }, '/config/theme/background'],
  ['theme name of 2 letters', { theme: { accent: 're' } }, '/config/theme/accent'],
  ['theme name of 31 letters', { theme: { accent: s(31) } }, '/config/theme/accent'],
  ['theme colour of 65', { theme: { accent: `rgb(${' '.repeat(60)}1,2,3)` } }, '/config/theme/accent'],
  ['theme logo http', { theme: { logo: 'http://x.example/l.png' } }, '/config/theme/logo'],
  ['theme logo protocol-relative', { theme: { logo: '//x.example/l.png' } }, '/config/theme/logo'],
  ['theme logo javascript', { theme: { logo: 'javascript:alert(1)' } }, '/config/theme/logo'],
  ['theme logo relative', { theme: { logo: 'logo.png' } }, '/config/theme/logo'],
  ['theme logo 2001', { theme: { logo: `/${s(2000)}` } }, '/config/theme/logo'],
  ['theme name empty', { theme: { name: '' } }, '/config/theme/name'],
  ['theme name 121', { theme: { name: s(121) } }, '/config/theme/name'],
  ['theme font with ;', { theme: { font: 'Inter; color: red' } }, '/config/theme/font'],
  ['theme font with parentheses', { theme: { font: 'url(x)' } }, '/config/theme/font'],
  ['theme font 257', { theme: { font: s(257) } }, '/config/theme/font'],
  ['theme unknown', { theme: { colour: 'red' } }, '/config/theme/colour'],
  ['collab ui other', { collab: { ui: 'none' } }, '/config/collab/ui'],
  ['collab comments', { collab: { comments: false } }, '/config/collab/comments'],
  ['build command empty', { build: { buildCommand: '' } }, '/config/build/buildCommand'],
  ['build rootDirectory number', { build: { rootDirectory: 1 } }, '/config/build/rootDirectory'],
  ['build timeout 59', { build: { timeoutSeconds: 59 } }, '/config/build/timeoutSeconds'],
  ['build timeout 7201', { build: { timeoutSeconds: 7201 } }, '/config/build/timeoutSeconds'],
  ['build timeout fraction', { build: { timeoutSeconds: 90.5 } }, '/config/build/timeoutSeconds'],
  ['build unknown', { build: { nodeVersion: '20' } }, '/config/build/nodeVersion'],
  ['placement unknown', { placement: { region: 'ams' } }, '/config/placement/region'],
  ['placement edge type', { placement: { edge: 'yes' } }, '/config/placement/edge'],
  ['firewall without action', fw({ match: { path: '/' } }), '/config/firewall/0/action'],
  ['firewall action allow', fw({ action: 'allow', match: { path: '/' } }), '/config/firewall/0/action'],
  ['firewall without match', fw({ action: 'block' }), '/config/firewall/0/match'],
  ['firewall empty match', fw({ action: 'block', match: {} }), '/config/firewall/0/match'],
  ['firewall match unknown attribute', block({ port: '80' }), '/config/firewall/0/match/port'],
  [
    'firewall name uppercase',
    fw({ name: 'Bots', action: 'block', match: { path: '/' } }),
    '/config/firewall/0/name',
  ],
  ['firewall name 62', fw({ name: s(62), action: 'block', match: { path: '/' } }), '/config/firewall/0/name'],
  [
    'firewall status on challenge',
    fw({ action: 'challenge', status: 403, match: { path: '/' } }),
    '/config/firewall/0/status',
  ],
  [
    'firewall status 399',
    fw({ action: 'block', status: 399, match: { path: '/' } }),
    '/config/firewall/0/status',
  ],
  [
    'firewall status 600',
    fw({ action: 'block', status: 600, match: { path: '/' } }),
    '/config/firewall/0/status',
  ],
  ['firewall any type', fw({ action: 'block', any: 'yes', match: { path: '/' } }), '/config/firewall/0/any'],
  [
    'firewall unknown',
    fw({ action: 'block', priority: 1, match: { path: '/' } }),
    '/config/firewall/0/priority',
  ],
  [
    'pointer names the failing rule',
    {
      firewall: [
        { action: 'block', match: { path: '/' } },
        { action: 'block', match: { path: '/' } },
        { action: 'block', match: { path: '/' } },
        { action: 'block', match: { ip: { op: 'in', values: ['10.0.0.1', 'x'] } } },
      ],
    },
    '/config/firewall/3/match/ip/values/1',
  ],
  ['ip not an address', ipMatch('10.0.0.256'), '/config/firewall/0/match/ip'],
  ['ip with leading zero', ipMatch('010.0.0.1'), '/config/firewall/0/match/ip'],
  ['ip wildcard string', ipMatch('10.*'), '/config/firewall/0/match/ip'],
  ['ip CIDR prefix too long', ipMatch('10.0.0.0/33'), '/config/firewall/0/match/ip'],
  ['ip IPv6 CIDR prefix too long', ipMatch('::/129'), '/config/firewall/0/match/ip'],
  ['ip list entry', ipMatch(['10.0.0.1', 'nope']), '/config/firewall/0/match/ip/1'],
  ['ip empty list', ipMatch([]), '/config/firewall/0/match/ip'],
  ['ip eq not an address', ipMatch({ op: 'eq', value: 'localhost' }), '/config/firewall/0/match/ip/value'],
  [
    'inCidr value entry',
    ipMatch({ op: 'inCidr', values: ['10.0.0.0/8', '10.0.0.0/99'] }),
    '/config/firewall/0/match/ip/values/1',
  ],
  [
    'inCidr on another attribute',
    block({ header: { 'X-Forwarded-For': { op: 'inCidr', values: ['x/8'] } } }),
    '/config/firewall/0/match/header/X-Forwarded-For/values/0',
  ],
  [
    'ip startsWith letters',
    ipMatch({ op: 'startsWith', value: 'abc.x' }),
    '/config/firewall/0/match/ip/value',
  ],
  ['ip wildcard op letters', ipMatch({ op: 'wildcard', value: 'zz*' }), '/config/firewall/0/match/ip/value'],
  ['clause without op', block({ path: { value: '/x' } }), '/config/firewall/0/match/path/op'],
  ['clause unknown op', block({ path: { op: 'regex', value: '.*' } }), '/config/firewall/0/match/path/op'],
  [
    'clause unknown key',
    block({ path: { op: 'eq', value: '/x', flags: 'i' } }),
    '/config/firewall/0/match/path/flags',
  ],
  ['clause in without values', block({ path: { op: 'in' } }), '/config/firewall/0/match/path/values'],
  [
    'clause in with value',
    block({ path: { op: 'in', values: ['/a'], value: '/a' } }),
    '/config/firewall/0/match/path/value',
  ],
  [
    'clause inCidr without values',
    ipMatch({ op: 'inCidr', value: '10.0.0.0/8' }),
    '/config/firewall/0/match/ip/values',
  ],
  ['clause eq without value', block({ path: { op: 'eq' } }), '/config/firewall/0/match/path/value'],
  [
    'clause contains with values',
    block({ path: { op: 'contains', value: 'a', values: ['b'] } }),
    '/config/firewall/0/match/path/values',
  ],
  [
    'clause exists with value',
    block({ path: { op: 'exists', value: 'x' } }),
    '/config/firewall/0/match/path/value',
  ],
  ['clause not type', block({ path: { op: 'exists', not: 'yes' } }), '/config/firewall/0/match/path/not'],
  ['clause empty values', block({ path: { op: 'in', values: [] } }), '/config/firewall/0/match/path/values'],
  [
    'wildcard with too many stars',
    block({ path: `/${'*a'.repeat(WILDCARD_MAX_STARS + 1)}` }),
    '/config/firewall/0/match/path',
  ],
  [
    'wildcard op with too many stars',
    block({ userAgent: { op: 'wildcard', value: 'a*'.repeat(WILDCARD_MAX_STARS + 1) } }),
    '/config/firewall/0/match/userAgent/value',
  ],
  [
    'wildcard in a list',
    block({ host: ['a.example', `*${'.*x'.repeat(WILDCARD_MAX_STARS)}`] }),
    '/config/firewall/0/match/host/1',
  ],
  ['empty header match', block({ header: {} }), '/config/firewall/0/match/header'],
  ['empty query parameter name', block({ query: { '': 'x' } }), '/config/firewall/0/match/query/'],
  [
    'invalid header name in match',
    block({ header: { 'X Api': 'x' } }),
    '/config/firewall/0/match/header/X Api',
  ],
  ['invalid cookie name in match', block({ cookie: { 'a;b': 'x' } }), '/config/firewall/0/match/cookie/a;b'],
  [
    'pointer escapes / in names',
    block({ query: { 'a/b': { op: 'eq' } } }),
    '/config/firewall/0/match/query/a~1b/value',
  ],
  ['cache unknown', { cache: { ttl: 5 } }, '/config/cache/ttl'],
  [
    '51 cache bypass rules',
    { cache: { bypass: Array.from({ length: 51 }, () => ({ match: { path: '/x' } })) } },
    '/config/cache/bypass',
  ],
  ['cache bypass without match', bypass({ name: 'x' }), '/config/cache/bypass/0/match'],
  [
    'cache bypass with action',
    bypass({ action: 'block', match: { path: '/' } }),
    '/config/cache/bypass/0/action',
  ],
  ['cache bypass name', bypass({ name: 'A B', match: { path: '/' } }), '/config/cache/bypass/0/name'],
  ['cache bypass ip', bypass({ match: { ip: '1.2.3' } }), '/config/cache/bypass/0/match/ip'],
  ['redirect without source', redirect({ destination: '/x' }), '/config/redirects/0/source'],
  ['redirect without destination', redirect({ source: '/x' }), '/config/redirects/0/destination'],
  [
    'redirect status 200',
    redirect({ source: '/a', destination: '/b', status: 200 }),
    '/config/redirects/0/status',
  ],
  [
    'redirect status string',
    redirect({ source: '/a', destination: '/b', status: '301' }),
    '/config/redirects/0/status',
  ],
  [
    'redirect force type',
    redirect({ source: '/a', destination: '/b', force: 1 }),
    '/config/redirects/0/force',
  ],
  ['redirect unknown', redirect({ source: '/a', destination: '/b', code: 301 }), '/config/redirects/0/code'],
  ['redirect relative source', redirect({ source: 'a', destination: '/b' }), '/config/redirects/0/source'],
  [
    'redirect splat in the middle',
    redirect({ source: '/a/*/b', destination: '/b' }),
    '/config/redirects/0/source',
  ],
  ['redirect two splats', redirect({ source: '/a*/*', destination: '/b' }), '/config/redirects/0/source'],
  [
    'redirect placeholder inside a segment',
    redirect({ source: '/a-:id', destination: '/b' }),
    '/config/redirects/0/source',
  ],
  [
    'redirect placeholder digit-first',
    redirect({ source: '/:1x', destination: '/b' }),
    '/config/redirects/0/source',
  ],
  [
    'redirect placeholder twice',
    redirect({ source: '/:id/:id', destination: '/b' }),
    '/config/redirects/0/source',
  ],
  [
    'redirect source with query',
    redirect({ source: '/a?x=1', destination: '/b' }),
    '/config/redirects/0/source',
  ],
  [
    'redirect source host with port',
    redirect({ source: 'https://a.example:8080/x', destination: '/b' }),
    '/config/redirects/0/source',
  ],
  [
    'redirect destination relative',
    redirect({ source: '/a', destination: 'b' }),
    '/config/redirects/0/destination',
  ],
  [
    'redirect destination javascript',
    redirect({ source: '/a', destination: 'javascript:alert(1)' }),
    '/config/redirects/0/destination',
  ],
  [
    'redirect destination protocol-relative',
    redirect({ source: '/a', destination: '//evil.example' }),
    '/config/redirects/0/destination',
  ],
  [
    'redirect destination with a dot segment',
    redirect({ source: '/a/:x', destination: '/b/../:x' }),
    '/config/redirects/0/destination',
  ],
  [
    'rewrite destination with an encoded dot segment',
    rewrite({ source: '/api/*', destination: 'https://api.example/v1/%2e%2E/:splat' }),
    '/config/rewrites/0/destination',
  ],
  [
    'redirect destination with CRLF',
    redirect({ source: '/a', destination: '/b\r\nSet-Cookie: x' }),
    '/config/redirects/0/destination',
  ],
  [
    'redirect destination starting with a variable',
    redirect({ source: '/a', destination: '{{ vars.SITE }}/x' }),
    '/config/redirects/0/destination',
  ],
  [
    'redirect destination with a broken variable',
    redirect({ source: '/a', destination: '/{{ var.X }}' }),
    '/config/redirects/0/destination',
  ],
  ['redirect to itself', redirect({ source: '/a', destination: '/a' }), '/config/redirects/0/destination'],
  [
    'redirect query name',
    redirect({ source: '/a', destination: '/b', query: { '1x': ':id' } }),
    '/config/redirects/0/query/1x',
  ],
  [
    'redirect query capture',
    redirect({ source: '/a', destination: '/b', query: { id: ':1' } }),
    '/config/redirects/0/query/id',
  ],
  ['rewrite without destination', rewrite({ source: '/a' }), '/config/rewrites/0/destination'],
  ['rewrite without source', rewrite({ destination: '/a' }), '/config/rewrites/0/source'],
  [
    'rewrite cache with a path destination',
    rewrite({ source: '/a', destination: '/b', cache: 'shared' }),
    '/config/rewrites/0/cache',
  ],
  [
    'rewrite notFound with a URL destination',
    rewrite({ source: '/a', destination: 'https://x.example/', notFound: true }),
    '/config/rewrites/0/notFound',
  ],
  [
    'rewrite relative destination',
    rewrite({ source: '/a', destination: 'index.html' }),
    '/config/rewrites/0/destination',
  ],
  ['rewrite status', rewrite({ source: '/a', destination: '/b', status: 200 }), '/config/rewrites/0/status'],
  [
    'rewrite notFound type',
    rewrite({ source: '/a', destination: '/b', notFound: 'yes' }),
    '/config/rewrites/0/notFound',
  ],
  [
    'header rule without source',
    { headers: [{ headers: [{ key: 'X-A', value: 'b' }] }] },
    '/config/headers/0/source',
  ],
  ['header rule without headers', { headers: [{ source: '/' }] }, '/config/headers/0/headers'],
  ['header rule empty headers', { headers: [{ source: '/', headers: [] }] }, '/config/headers/0/headers'],
  ['header without key', header({ value: 'x' }), '/config/headers/0/headers/0/key'],
  ['header without value or remove', header({ key: 'X-A' }), '/config/headers/0/headers/0/value'],
  ['header remove false', header({ key: 'X-A', remove: false }), '/config/headers/0/headers/0/value'],
  [
    'header value and remove',
    header({ key: 'X-A', value: 'x', remove: true }),
    '/config/headers/0/headers/0/remove',
  ],
  [
    'header value with CRLF',
    header({ key: 'X-A', value: 'a\r\nSet-Cookie: x=1' }),
    '/config/headers/0/headers/0/value',
  ],
  ['header value with LF', header({ key: 'X-A', value: 'a\nb' }), '/config/headers/0/headers/0/value'],
  // Written as latin1, U+010D U+010A would reach the wire as CR LF (issue #17).
  [
    'header value with U+010D U+010A',
    header({ key: 'X-A', value: 'a\u010d\u010aSet-Cookie: x=1; Domain=example.com' }),
    '/config/headers/0/headers/0/value',
  ],
  [
    'header value with U+2028',
    header({ key: 'X-A', value: 'a\u2028b' }),
    '/config/headers/0/headers/0/value',
  ],
  ['header value astral', header({ key: 'X-A', value: '\u{1F600}' }), '/config/headers/0/headers/0/value'],
  ['header value C1', header({ key: 'X-A', value: 'a\u0085b' }), '/config/headers/0/headers/0/value'],
  ['header value empty', header({ key: 'X-A', value: '' }), '/config/headers/0/headers/0/value'],
  ['header value blank', header({ key: 'X-A', value: ' \t' }), '/config/headers/0/headers/0/value'],
  ['header value with NUL', header({ key: 'X-A', value: 'a\u0000' }), '/config/headers/0/headers/0/value'],
  ['header key with CR', header({ key: 'X-A\r', value: 'a' }), '/config/headers/0/headers/0/key'],
  ['header key with NUL', header({ key: 'X\u0000A', value: 'a' }), '/config/headers/0/headers/0/key'],
  ['header key with colon', header({ key: 'X-A:', value: 'a' }), '/config/headers/0/headers/0/key'],
  ['header key with space', header({ key: 'X A', value: 'a' }), '/config/headers/0/headers/0/key'],
  ['header Connection', header({ key: 'Connection', value: 'close' }), '/config/headers/0/headers/0/key'],
  ['header keep-alive', header({ key: 'keep-alive', value: 'x' }), '/config/headers/0/headers/0/key'],
  [
    'header Transfer-Encoding',
    header({ key: 'Transfer-Encoding', value: 'chunked' }),
    '/config/headers/0/headers/0/key',
  ],
  ['header Content-Length', header({ key: 'CONTENT-LENGTH', value: '1' }), '/config/headers/0/headers/0/key'],
  ['header TE', header({ key: 'TE', value: 'trailers' }), '/config/headers/0/headers/0/key'],
  ['header Trailer', header({ key: 'Trailer', value: 'x' }), '/config/headers/0/headers/0/key'],
  ['header Upgrade', header({ key: 'Upgrade', value: 'h2c' }), '/config/headers/0/headers/0/key'],
  [
    'header Proxy-Authorization',
    header({ key: 'Proxy-Authorization', value: 'x' }),
    '/config/headers/0/headers/0/key',
  ],
  [
    'header Proxy-* removal',
    header({ key: 'proxy-connection', remove: true }),
    '/config/headers/0/headers/0/key',
  ],
  ['header Host', header({ key: 'Host', value: 'x' }), '/config/headers/0/headers/0/key'],
  [
    'header Content-Encoding',
    header({ key: 'Content-Encoding', value: 'gzip' }),
    '/config/headers/0/headers/0/key',
  ],
  [
    'header Set-Cookie (platform managed)',
    header({ key: 'Set-Cookie', value: 'a=b' }),
    '/config/headers/0/headers/0/key',
  ],
  ['header source relative', header({ key: 'X-A', value: 'b' }, 'a'), '/config/headers/0/source'],
  [
    'second header of the second rule',
    {
      headers: [
        { source: '/', headers: [{ key: 'X-A', value: 'b' }] },
        {
          source: '/',
          headers: [
            { key: 'X-B', value: 'c' },
            { key: 'Upgrade', value: 'x' },
          ],
        },
      ],
    },
    '/config/headers/1/headers/1/key',
  ],
  ['users without enabled', users({ providers: goodUsers.providers }), '/config/users/enabled'],
  ['users without providers', users({ enabled: true }), '/config/users/providers'],
  [
    'users without identityProvider',
    users({ enabled: true, providers: { avatarProvider: { enabled: true }, service: { enabled: true } } }),
    '/config/users/providers/identityProvider',
  ],
  [
    'users without avatarProvider',
    users({
      enabled: true,
      providers: { identityProvider: { mode: 'oidc', clientId: 'a' }, service: { enabled: true } },
    }),
    '/config/users/providers/avatarProvider',
  ],
  [
    'users without service',
    users({
      enabled: true,
      providers: { identityProvider: { mode: 'oidc', clientId: 'a' }, avatarProvider: { enabled: true } },
    }),
    '/config/users/providers/service',
  ],
  [
    'users identityProvider without mode',
    users({ ...goodUsers, providers: { ...goodUsers.providers, identityProvider: { clientId: 'a' } } }),
    '/config/users/providers/identityProvider/mode',
  ],
  [
    'users identityProvider without clientId',
    users({ ...goodUsers, providers: { ...goodUsers.providers, identityProvider: { mode: 'oidc' } } }),
    '/config/users/providers/identityProvider/clientId',
  ],
  [
    'users service without enabled',
    users({ ...goodUsers, providers: { ...goodUsers.providers, service: {} } }),
    '/config/users/providers/service/enabled',
  ],
  ['users unknown', users({ ...goodUsers, roles: [] }), '/config/users/roles'],
  [
    '33 dataSources',
    {
      dataSources: Object.fromEntries(
        Array.from({ length: 33 }, (_, i) => [`s${i}`, { kind: 'cms', url: 'https://x.example' }]),
      ),
    },
    '/config/dataSources',
  ],
  [
    'dataSource name with a dash',
    { dataSources: { 'my-cms': { kind: 'cms', url: 'https://x.example' } } },
    '/config/dataSources/my-cms',
  ],
  [
    'dataSource name digit-first',
    { dataSources: { '1cms': { kind: 'cms', url: 'https://x.example' } } },
    '/config/dataSources/1cms',
  ],
  [
    'dataSource name 129',
    { dataSources: { [`a${s(128)}`]: { kind: 'cms', url: 'https://x.example' } } },
    `/config/dataSources/a${s(128)}`,
  ],
  [
    'dataSource name __proto__',
    JSON.parse('{"dataSources":{"__proto__":{"kind":"cms","url":"https://x.example"}}}'),
    '/config/dataSources/__proto__',
  ],
  [
    'dataSource name constructor',
    { dataSources: { constructor: { kind: 'cms', url: 'https://x.example' } } },
    '/config/dataSources/constructor',
  ],
  [
    'dataSource name prototype',
    { dataSources: { prototype: { kind: 'cms', url: 'https://x.example' } } },
    '/config/dataSources/prototype',
  ],
  [
    'dataSource kind other',
    { dataSources: { cms: { kind: 'api', url: 'https://x.example' } } },
    '/config/dataSources/cms/kind',
  ],
  ['dataSource without url', { dataSources: { cms: { kind: 'cms' } } }, '/config/dataSources/cms/url'],
  [
    'dataSource without kind',
    { dataSources: { cms: { url: 'https://x.example' } } },
    '/config/dataSources/cms/kind',
  ],
  [
    'dataSource unknown key',
    { dataSources: { cms: { kind: 'cms', url: 'https://x.example', token: 'x' } } },
    '/config/dataSources/cms/token',
  ],
  ['dataSource url empty', ds(''), '/config/dataSources/cms/url'],
  ['dataSource url http', ds('http://cms.example'), '/config/dataSources/cms/url'],
  [
    'defaultDataSource unknown',
    { ...ds('https://x.example'), defaultDataSource: 'other' },
    '/config/defaultDataSource',
  ],
  ['defaultDataSource without dataSources', { defaultDataSource: 'cms' }, '/config/defaultDataSource'],
  [
    'defaultDataSource bad name',
    { ...ds('https://x.example'), defaultDataSource: 'my-cms' },
    '/config/defaultDataSource',
  ],
  ['defaultDataSource prototype', { defaultDataSource: 'constructor' }, '/config/defaultDataSource'],
];

describe('SpaceConfig validation', () => {
  it('is registered as a named schema', () => {
    expect(getSchema('SpaceConfig')).toBe(SpaceConfig);
    expect(SpaceConfig.additionalProperties).toBe(false);
  });

  it.each(valid)('accepts %s', (_what, config) => {
    expect(() => validateSpaceConfig(config)).not.toThrow();
  });

  it.each(invalid)('rejects %s', (_what, config, pointer) => {
    const err = failure(() => validateSpaceConfig(config));
    expect(err.code).toBe('validation_error');
    expect(statusOf(err.code)).toBe(400);
    expect(err.extras.pointer).toBe(pointer);
    expect(err.detail.length).toBeGreaterThan(0);
  });

  it('nests pointers under the given prefix', () => {
    expect(failure(() => validateSpaceConfig({ index: '' }, '')).extras.pointer).toBe('/index');
    expect(failure(() => validateSpaceConfig(ds('http://x'), '/body')).extras.pointer).toBe(
      '/body/dataSources/cms/url',
    );
  });

  it('serves a JSON-clean schema document', async () => {
    const { schemaDocument } = await import('../../src/schemas/registry.ts');
    const doc = schemaDocument('https://api.example', 'SpaceConfig')!;
    expect(doc.$id).toBe('https://api.example/schemas/SpaceConfig.json');
    expect(Object.keys(doc.properties as object)).toContain('dataSources');
  });

  it('rejects an overlay larger than a settings file', () => {
    const big = { meta: { description: 'x' }, templates: Array.from({ length: 100 }, () => s(1024)) };
    expect(() => validateSpaceConfig(big)).not.toThrow();
    const huge = {
      superpowers: { javascriptTags: Array.from({ length: 16 }, () => ({ code: s(8192) })) },
      redirects: Array.from({ length: 200 }, (_, i) => ({ source: `/${i}${s(1000)}`, destination: '/x' })),
    };
    expect(JSON.stringify(huge).length).toBeGreaterThan(MAX_CONFIG_BYTES);
    expect(failure(() => validateSpaceConfig(huge)).extras.pointer).toBe('/config');
  });

  it('returns the normalised overlay and leaves the input alone', () => {
    const input = {
      firewall: [
        { action: 'block', match: { path: '/a' } },
        { action: 'challenge', match: { path: '/b' } },
      ],
      redirects: [{ source: '/a', destination: '/b' }],
      superpowers: { tags: { inheritance: { overrides: [{ tagId: 't' }] } } },
      dataSources: { cms: { kind: 'cms', url: 'https://CMS.Example:443/a/./b/' } },
    };
    const before = JSON.stringify(input);
    const out = validateSpaceConfig(input);
    expect(JSON.stringify(input)).toBe(before);
    expect(out.firewall![0]).toEqual({ action: 'block', match: { path: '/a' }, status: 403, any: false });
    expect(out.firewall![1]).toEqual({ action: 'challenge', match: { path: '/b' }, any: false });
    expect(out.redirects![0]!.status).toBe(302);
    expect(out.superpowers!.tags!.inheritance!.overrides![0]!.disabled).toBe(false);
    expect(out.dataSources!.cms!.url).toBe('https://cms.example/a/b');
    // Validating the stored form again is a fixed point.
    expect(validateSpaceConfig(out)).toEqual(out);
  });
});

describe('data source URL normalisation', () => {
  const normal: Array<[string, string]> = [
    ['https://bücher.example/', 'https://xn--bcher-kva.example/'],
    ['https://EXAMPLE.com:443/a/../b/', 'https://example.com/b'],
    ['https://example.com', 'https://example.com/'],
    ['https://example.com/', 'https://example.com/'],
    ['https://example.com/a/b///', 'https://example.com/a/b'],
    ['https://example.com/a/./b/.', 'https://example.com/a/b'],
    ['https://example.com/../../a', 'https://example.com/a'],
    ['https://example.com/a/%2e%2E/b', 'https://example.com/b'],
    ['https://example.com:8443/api', 'https://example.com:8443/api'],
    ['https://example.com:00443/x', 'https://example.com/x'],
    ['https://example.com/%7euser/%41', 'https://example.com/~user/A'],
    ['https://example.com/a%20b', 'https://example.com/a%20b'],
    ['https://example.com/caf%c3%a9', 'https://example.com/caf%C3%A9'],
    ['https://example.com/café', 'https://example.com/caf%C3%A9'],
    ['https://example.com/a%3bb;c=1', 'https://example.com/a%3Bb;c=1'],
    ['https://example.com/a"b<c>', 'https://example.com/a%22b%3Cc%3E'],
    ['https://ÉXAMPLE.例え.jp/', 'https://xn--xample-9ua.xn--r8jz45g.jp/'],
    ['https://192.0.2.10:8080/cms', 'https://192.0.2.10:8080/cms'],
    ['https://[2001:DB8:0:0:0:0:0:1]/', 'https://[2001:db8::1]/'],
    ['https://[::1]:443', 'https://[::1]/'],
    [`https://${s(63)}.example/`, `https://${s(63)}.example/`],
  ];
  it.each(normal)('%s → %s', (input, output) => {
    expect(normalizeDataSourceUrl(input)).toBe(output);
    expect(normalizeDataSourceUrl(output)).toBe(output);
  });

  const rejected: Array<[string, string, string]> = [
    ['empty', '', 'url_length'],
    ['too long', `https://example.com/${s(2030)}`, 'url_length'],
    ['http', 'http://example.com/', 'url_scheme'],
    ['uppercase scheme', 'HTTPS://example.com/', 'url_scheme'],
    ['no scheme', 'example.com/', 'url_scheme'],
    ['ftp', 'ftp://example.com/', 'url_scheme'],
    ['credentials', 'https://user:pw@example.com/', 'url_credentials'],
    ['user only', 'https://user@example.com/', 'url_credentials'],
    ['query', 'https://example.com/a?b=1', 'url_query'],
    ['empty query', 'https://example.com/?', 'url_query'],
    ['fragment', 'https://example.com/#x', 'url_fragment'],
    ['trailing-dot host', 'https://example.com./', 'url_trailing_dot'],
    ['ideographic trailing dot', 'https://example.com\u3002/', 'url_trailing_dot'],
    ['encoded percent', 'https://example.com/a%25b', 'url_encoded_percent'],
    ['encoded slash', 'https://example.com/a%2Fb', 'url_encoded_slash'],
    ['encoded slash lowercase', 'https://example.com/a%2fb', 'url_encoded_slash'],
    ['encoded backslash', 'https://example.com/a%5cb', 'url_encoded_slash'],
    ['raw backslash', 'https://example.com\\@evil.example/', 'url_backslash'],
    ['malformed escape', 'https://example.com/a%zz', 'url_percent'],
    ['truncated escape', 'https://example.com/a%4', 'url_percent'],
    ['control character', 'https://example.com/a\u0001', 'url_control'],
    ['DEL', 'https://example.com/a\u007f', 'url_control'],
    ['encoded NUL', 'https://example.com/a%00', 'url_control'],
    ['encoded LF', 'https://example.com/a%0A', 'url_control'],
    ['encoded C1 control', 'https://example.com/a%C2%85', 'url_control'],
    ['raw space', 'https://example.com/a b', 'url_whitespace'],
    ['tab', 'https://example.com/a\tb', 'url_control'],
    ['raw no-break space', 'https://example.com/a\u00a0b', 'url_whitespace'],
    ['encoded no-break space', 'https://example.com/a%C2%A0b', 'url_whitespace'],
    ['encoded ideographic space', 'https://example.com/a%E3%80%80', 'url_whitespace'],
    ['invalid UTF-8 escape', 'https://example.com/%C3', 'url_utf8'],
    ['overlong UTF-8', 'https://example.com/%C0%AF', 'url_utf8'],
    ['lone surrogate', 'https://example.com/\ud800', 'url_utf8'],
    ['no host', 'https:///path', 'url_host'],
    ['port only', 'https://:443/', 'url_host'],
    ['label of 64', `https://${s(64)}.example/`, 'url_host'],
    ['host of 254', `https://${Array.from({ length: 4 }, () => s(62)).join('.')}.abc/`, 'url_host'],
    ['empty label', 'https://a..example/', 'url_host'],
    ['label with underscore', 'https://a_b.example/', 'url_host'],
    ['label starting with hyphen', 'https://-a.example/', 'url_host'],
    ['invalid punycode', 'https://xn--zz.example/', 'url_host'],
    ['percent in host', 'https://ex%61mple.com/', 'url_host'],
    ['short IPv4', 'https://127.1/', 'url_host'],
    ['IPv4 with leading zero', 'https://127.0.0.01/', 'url_host'],
    ['IPv4 octet 256', 'https://1.2.3.256/', 'url_host'],
    ['hex IPv4', 'https://0x7f000001/', 'url_host'],
    ['numeric last label', 'https://foo.123/', 'url_host'],
    ['bare IPv6', 'https://::1/', 'url_host'],
    ['bad IPv6', 'https://[2001:db8::g]/', 'url_host'],
    ['IPv6 zone', 'https://[fe80::1%25eth0]/', 'url_host'],
    ['unterminated IPv6', 'https://[::1/', 'url_host'],
    ['port zero', 'https://example.com:0/', 'url_port'],
    ['port too large', 'https://example.com:65536/', 'url_port'],
    ['empty port', 'https://example.com:/', 'url_port'],
    ['port with letters', 'https://example.com:8o/', 'url_port'],
  ];
  it.each(rejected)('rejects %s', (_what, input, rule) => {
    const err = failure(() => normalizeDataSourceUrl(input, '/url'));
    expect(err.code).toBe('validation_error');
    expect(err.extras.pointer).toBe('/url');
    expect(err.extras.details).toEqual({ rule });
  });
});

describe('wildcard matcher', () => {
  const cases: Array<[string, string, boolean]> = [
    ['/a/*', '/a/b/c', true],
    ['/a/*', '/b/a/', false],
    ['*bot*', 'Googlebot/2.1', true],
    ['*bot*', 'curl', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['a*a', 'a', false],
    ['a**b', 'ab', true],
    ['*', '', true],
    ['exact', 'exact', true],
    ['exact', 'exactly', false],
    ['*.php', '/x.php', true],
    ['*.php', '/x.phps', false],
  ];
  it.each(cases)('%s against %s → %s', (pattern, input, expected) => {
    expect(compileWildcard(pattern).test(input)).toBe(expected);
  });

  it('can fold case', () => {
    expect(compileWildcard('*BOT*', { caseInsensitive: true }).test('googlebot')).toBe(true);
  });

  it('stays fast on inputs that make backtracking regexes explode', () => {
    const m = compileWildcard(`${'*a'.repeat(WILDCARD_MAX_STARS - 1)}*b`);
    const input = 'a'.repeat(200_000);
    const t0 = performance.now();
    expect(m.test(input)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(250);
  });
});

describe('canonical JSON and settings digest', () => {
  it('sorts keys at every level and drops whitespace and undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: null, x: 'é' }], c: true }, u: undefined })).toBe(
      '{"a":{"c":true,"d":[2,{"x":"é","y":null}]},"b":1}',
    );
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
  });

  it('gives equal digests for equal settings whatever the key order', () => {
    const a = settingsDigest('Docs', { theme: { accent: '#fff', name: 'x' }, cleanUrls: true });
    const b = settingsDigest('Docs', { cleanUrls: true, theme: { name: 'x', accent: '#fff' } });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).toBe(b);
  });

  it('changes with the title and the overlay, and treats a missing overlay as null', () => {
    const base = settingsDigest('Docs', null);
    expect(settingsDigest('Docs', undefined)).toBe(base);
    expect(settingsDigest('Docs!', null)).not.toBe(base);
    expect(settingsDigest('Docs', {})).not.toBe(base);
    expect(settingsDigest('Docs', { cleanUrls: false })).not.toBe(
      settingsDigest('Docs', { cleanUrls: true }),
    );
  });

  it('is sha256 over the documented canonical form', async () => {
    const { createHash } = await import('node:crypto');
    const expected = createHash('sha256').update('{"config":{"index":false},"title":"T"}').digest('hex');
    expect(settingsDigest('T', { index: false })).toBe(expected);
  });
});
