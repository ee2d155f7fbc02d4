import { describe, expect, it } from 'vitest';
import { type RouteRequest, trafficMatches } from '../../src/site/firewall.ts';
import type { TrafficMatch } from '../../src/site/rule-set.ts';
import { site } from '../edge/helpers.ts';

const base: RouteRequest = {
  method: 'GET',
  path: '/wp-admin/setup.php',
  query: new URLSearchParams('id=7&debug=1'),
  host: 'shop.example.com:8443',
  headers: { 'user-agent': 'Mozilla/5.0 BadBot/2.1', referer: 'https://spam.example/x', 'x-api-key': 'k1' },
  cookies: { session: 'abc' },
  ip: '198.51.100.23',
  country: 'DE',
  asn: 64500,
  ja3: '771,4865-4866',
  ja4: 't13d1516h2_8daaf6152771_02713d6af862',
};

describe('trafficMatches', () => {
  const table: Array<[string, TrafficMatch, boolean, Partial<RouteRequest>?]> = [
    ['path exact', { path: '/wp-admin/setup.php' }, true],
    ['path exact miss', { path: '/wp-admin' }, false],
    ['path wildcard', { path: '/wp-admin/*' }, true],
    ['path list (any)', { path: ['/x', '/wp-*'] }, true],
    ['host ignores port and case', { host: 'SHOP.example.com' }, true],
    ['host wildcard', { host: '*.example.com' }, true],
    ['method caseless', { method: 'get' }, true],
    ['method in', { method: { op: 'in', values: ['POST', 'PUT'] } }, false],
    ['ip exact', { ip: '198.51.100.23' }, true],
    ['ip CIDR string', { ip: '198.51.100.0/24' }, true],
    ['ip CIDR miss', { ip: '10.0.0.0/8' }, false],
    ['ip inCidr', { ip: { op: 'inCidr', values: ['10.0.0.0/8', '198.51.0.0/16'] } }, true],
    ['ipv4-mapped client in v4 CIDR', { ip: '198.51.100.0/24' }, true, { ip: '::ffff:198.51.100.23' }],
    ['ipv6 CIDR', { ip: '2001:db8::/32' }, true, { ip: '2001:db8::1' }],
    ['ipv6 client vs v4 CIDR', { ip: '198.51.100.0/24' }, false, { ip: '2001:db8::1' }],
    ['country caseless', { country: 'de' }, true],
    ['country neq', { country: { op: 'neq', value: 'DE' } }, false],
    ['country missing + neq', { country: { op: 'neq', value: 'DE' } }, true, { country: null }],
    ['country missing + eq', { country: 'DE' }, false, { country: null }],
    ['asn with AS prefix', { asn: 'AS64500' }, true],
    ['asn plain', { asn: '64500' }, true],
    ['userAgent contains', { userAgent: { op: 'contains', value: 'BadBot' } }, true],
    ['userAgent wildcard op', { userAgent: { op: 'wildcard', value: 'Mozilla/*Bot*' } }, true],
    ['userAgent startsWith not', { userAgent: { op: 'startsWith', value: 'Mozilla', not: true } }, false],
    ['referer endsWith', { referer: { op: 'endsWith', value: '/x' } }, true],
    ['extension', { extension: 'php' }, true],
    ['extension with dot', { extension: '.PHP' }, true],
    ['extension none', { extension: { op: 'exists' } }, false, { path: '/about' }],
    ['ja3', { ja3: '771,4865-4866' }, true],
    ['ja4 startsWith', { ja4: { op: 'startsWith', value: 't13d' } }, true],
    ['header caseless name', { header: { 'X-API-Key': 'k1' } }, true],
    ['header exists', { header: { authorization: { op: 'exists' } } }, false],
    ['header not exists', { header: { authorization: { op: 'exists', not: true } } }, true],
    ['cookie', { cookie: { session: 'abc' } }, true],
    ['cookie missing', { cookie: { other: { op: 'exists' } } }, false],
    ['query', { query: { debug: '1' } }, true],
    ['query repeats comma-joined', { query: { t: 'a,b' } }, true, { query: new URLSearchParams('t=a&t=b') }],
    ['all must hold', { path: '/wp-admin/*', country: 'FR' }, false],
    ['eq op', { path: { op: 'eq', value: '/wp-admin/setup.php' } }, true],
  ];
  it.each(table)('%s', (_name, match, want, extra) => {
    expect(trafficMatches(match, false, { ...base, ...extra })).toBe(want);
  });

  it('any: one field is enough', () => {
    expect(trafficMatches({ path: '/nope', country: 'DE' }, true, base)).toBe(true);
    expect(trafficMatches({ path: '/nope', country: 'FR' }, true, base)).toBe(false);
    expect(trafficMatches({ header: { a: 'x', 'x-api-key': 'k1' } }, true, base)).toBe(true);
    expect(trafficMatches({ header: { a: 'x', 'x-api-key': 'k1' } }, false, base)).toBe(false);
  });

  it('an empty match never fires', () => {
    expect(trafficMatches({}, false, base)).toBe(false);
    expect(trafficMatches({}, true, base)).toBe(false);
  });
});

describe('firewall and cache bypass in route()', () => {
  const s = site(['index.html', 'admin/index.html', 'api.json'], {
    redirectsText: '/admin/* /elsewhere 302!',
    config: {
      firewall: [
        { name: 'no-php', action: 'block', match: { extension: 'php' } },
        { name: 'geo', action: 'block', status: 451, match: { country: ['KP', 'IR'] } },
        { name: 'admin-challenge', action: 'challenge', match: { path: '/admin/*' } },
        {
          name: 'internal',
          action: 'block',
          status: 404,
          match: { path: '/admin/*', ip: { op: 'inCidr', values: ['10.0.0.0/8'], not: true } },
        },
      ],
      cache: {
        bypass: [
          { name: 'api', match: { path: '/api.json' } },
          { match: { cookie: { session: { op: 'exists' } } } },
        ],
      },
    },
  });
  it.each([
    ['/x.php', {}, 'block:403'],
    ['/%2e/x.php', {}, 'block:403'],
    ['/', { country: 'KP' }, 'block:451'],
    ['/admin/', {}, 'challenge'],
    ['/admin/', { challengePassed: true }, 'block:404'],
    ['/admin/', { challengePassed: true, ip: '10.1.2.3' }, 'redirect:302 /elsewhere'],
    ['/', {}, 'file:index.html 200'],
  ])('%s %j → %s', (url, extra, want) => {
    expect(s.summary(url, extra)).toBe(want);
  });

  it('firewall runs on the same normalised path as everything else', () => {
    // `/admin/../x.php` and `/admin%2fx` never reach the router in another shape.
    expect(s.summary('/admin/../x.php')).toBe('block:403');
  });

  it('cache bypass sets noStore', () => {
    expect(s.go('/api.json').noStore).toBe(true);
    expect(s.go('/').noStore).toBe(false);
    expect(s.go('/', { cookies: { session: '1' } }).noStore).toBe(true);
  });
});
