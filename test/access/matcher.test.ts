import { describe, expect, it } from 'vitest';
import { compileGrant, decide, firstMatch, type Miss, missOf } from '../../src/domain/access/matcher.ts';
import type {
  AccessQuery,
  AccessRole,
  Capability,
  Constraints,
  Grant,
  ServedTarget,
  Visitor,
} from '../../src/domain/access/model.ts';
import { compilePaths, pathsMatch, pathsProblem } from '../../src/domain/access/paths.ts';

const NOW = new Date('2026-06-01T12:00:00.000Z');

function grant(over: Partial<Grant> & { id?: string } = {}): Grant {
  return {
    id: over.id ?? 'g1',
    audience: over.audience ?? { type: 'public' },
    paths: over.paths ?? ['/**'],
    role: over.role ?? 'viewer',
    target: over.target ?? 'all-versions',
    constraints: over.constraints ?? {},
    uses: over.uses ?? 0,
    revokedAt: over.revokedAt ?? null,
  };
}

function query(over: Partial<AccessQuery> = {}): AccessQuery {
  return {
    path: over.path ?? '/',
    target: over.target ?? { kind: 'live', versionId: 'v1' },
    capability: over.capability ?? 'page.view',
    now: over.now ?? NOW,
  };
}

// ---- paths ---------------------------------------------------------------------------------------
const PATH_CASES: [string[], string, boolean][] = [
  [['/**'], '/', true],
  [['/**'], '/a/b/c.html', true],
  [['/'], '/', true],
  [['/'], '/a', false],
  [['/docs'], '/docs', true],
  [['/docs'], '/docs/', true],
  [['/docs'], '/docs/a', false],
  [['/docs/*'], '/docs/a', true],
  [['/docs/*'], '/docs', false],
  [['/docs/*'], '/docs/a/b', false],
  [['/docs/**'], '/docs', true],
  [['/docs/**'], '/docs/a', true],
  [['/docs/**'], '/docs/a/b/c', true],
  [['/docs/**'], '/doc', false],
  [['/docs/**'], '/docsx/a', false],
  [['/*.html'], '/index.html', true],
  [['/*.html'], '/index.htm', false],
  [['/*.html'], '/a/index.html', false],
  [['/**/*.html'], '/a/index.html', true],
  [['/**/*.html'], '/index.html', true],
  [['/**/*.html'], '/a/b/c/x.html', true],
  [['/**/*.html'], '/a/b/c/x.css', false],
  [['/a/*/c'], '/a/b/c', true],
  [['/a/*/c'], '/a/b/d', false],
  [['/a/*/c'], '/a/c', false],
  [['/a/**/c'], '/a/c', true],
  [['/a/**/c'], '/a/x/y/c', true],
  [['/a/**/c'], '/a/x/y/d', false],
  [['/blog-*'], '/blog-2024', true],
  [['/blog-*'], '/blog', false],
  [['/*-draft/**'], '/post-draft/x', true],
  [['/*-draft/**'], '/post-final/x', false],
  [['/a.b'], '/a.b', true],
  [['/a.b'], '/aXb', false],
  [['/(x)'], '/(x)', true],
  [['/**', '!/private/**'], '/public/x', true],
  [['/**', '!/private/**'], '/private', false],
  [['/**', '!/private/**'], '/private/x/y', false],
  [['/**', '!/private/**'], '/privately', true],
  [['/docs/**', '!/docs/internal/**'], '/docs/guide', true],
  [['/docs/**', '!/docs/internal/**'], '/docs/internal/a', false],
  [['/docs/**', '!/docs/internal/**'], '/blog', false],
  [['/docs/**', '!/docs/*.pdf'], '/docs/a.pdf', false],
  [['/docs/**', '!/docs/*.pdf'], '/docs/x/a.pdf', true],
  [['/docs/**', '!/**/*.pdf'], '/docs/x/a.pdf', false],
  [['/a', '/b'], '/a', true],
  [['/a', '/b'], '/b', true],
  [['/a', '/b'], '/c', false],
  [['/a/**', '/b/**', '!/a/secret'], '/a/secret', false],
  [['/a/**', '/b/**', '!/a/secret'], '/b/secret', true],
  [['/**', '!/'], '/', false],
  [['/**', '!/'], '/x', true],
  [['/Docs/**'], '/docs/a', false],
  [['/**/**'], '/a/b', true],
  [['/a/**/**/b'], '/a/b', true],
  [['/*'], '/', false],
  [['/*'], '/a', true],
];

describe('path globs', () => {
  it.each(PATH_CASES)('%j on %s → %s', (globs, path, expected) => {
    expect(pathsProblem(globs)).toBeNull();
    expect(pathsMatch(compilePaths(globs), path)).toBe(expected);
  });

  const BAD: [string[], string][] = [
    [[], 'at least one'],
    [['!/a'], 'not every glob'],
    [['!/a', '!/b'], 'not every glob'],
    [['docs/**'], 'does not start with'],
    [['/a**'], 'whole segment'],
    [['/a b'], 'space'],
    [['/a?b'], 'space'],
  ];
  it.each(BAD)('refuses %j', (globs, reason) => {
    expect(pathsProblem(globs)?.reason).toContain(reason);
  });
});

// ---- one grant, one dimension at a time ---------------------------------------------------------
type Case = [string, Partial<Grant>, Visitor, Partial<AccessQuery>, Miss | null];

const link = (id: string) => ({ type: 'link' as const, id });
const AUDIENCE: Case[] = [
  ['public lets anyone', { audience: { type: 'public' } }, {}, {}, null],
  ['team refuses a stranger', { audience: { type: 'team' } }, {}, {}, 'audience'],
  ['team refuses a signed-in non-member', { audience: { type: 'team' } }, { userId: 'u1' }, {}, 'audience'],
  ['team lets a member', { audience: { type: 'team' } }, { userId: 'u1', teamMember: true }, {}, null],
  ['person by user id', { audience: { type: 'person', userId: 'u1' } }, { userId: 'u1' }, {}, null],
  ['person, other user', { audience: { type: 'person', userId: 'u1' } }, { userId: 'u2' }, {}, 'audience'],
  ['person, nobody', { audience: { type: 'person', userId: 'u1' } }, {}, {}, 'audience'],
  ['person by e-mail', { audience: { type: 'person', email: 'A@x.org' } }, { email: 'a@X.org' }, {}, null],
  [
    'person, other e-mail',
    { audience: { type: 'person', email: 'a@x.org' } },
    { email: 'b@x.org' },
    {},
    'audience',
  ],
  [
    'person with neither field',
    { audience: { type: 'person' } },
    { userId: 'u1', email: 'a@x' },
    {},
    'audience',
  ],
  ['link held', { audience: { type: 'link', credentialId: 'l1' } }, { credentials: [link('l1')] }, {}, null],
  [
    'other link held',
    { audience: { type: 'link', credentialId: 'l1' } },
    { credentials: [link('l2')] },
    {},
    'audience',
  ],
  [
    'link id as password',
    { audience: { type: 'password', credentialId: 'l1' } },
    { credentials: [link('l1')] },
    {},
    'audience',
  ],
  [
    'password held',
    { audience: { type: 'password', credentialId: 'p1' } },
    { credentials: [{ type: 'password', id: 'p1' }] },
    {},
    null,
  ],
  [
    'machine held',
    { audience: { type: 'machine', credentialId: 'm1' } },
    { credentials: [{ type: 'machine', id: 'm1' }] },
    {},
    null,
  ],
  ['machine, none held', { audience: { type: 'machine', credentialId: 'm1' } }, {}, {}, 'audience'],
  [
    'several held, one fits',
    { audience: { type: 'machine', credentialId: 'm1' } },
    { credentials: [link('x'), { type: 'machine', id: 'm1' }] },
    {},
    null,
  ],
  [
    'external issuer',
    { audience: { type: 'external', issuer: 'https://idp' } },
    { external: { issuer: 'https://idp', subject: 's' } },
    {},
    null,
  ],
  [
    'external subject',
    { audience: { type: 'external', issuer: 'https://idp', subject: 's' } },
    { external: { issuer: 'https://idp', subject: 's' } },
    {},
    null,
  ],
  [
    'external, other subject',
    { audience: { type: 'external', issuer: 'https://idp', subject: 's' } },
    { external: { issuer: 'https://idp', subject: 't' } },
    {},
    'audience',
  ],
  [
    'external, other issuer',
    { audience: { type: 'external', issuer: 'https://idp' } },
    { external: { issuer: 'https://evil', subject: 's' } },
    {},
    'audience',
  ],
  ['external, none', { audience: { type: 'external', issuer: 'https://idp' } }, {}, {}, 'audience'],
  [
    'team member holding nothing else, link grant',
    { audience: { type: 'link', credentialId: 'l1' } },
    { teamMember: true },
    {},
    'audience',
  ],
];

const ROLE_CASES: Case[] = [];
const CAPS: Capability[] = [
  'page.view',
  'comments.read',
  'comments.write',
  'content.publish',
  'access.manage',
];
const EXPECT: Record<AccessRole, number> = { viewer: 1, commenter: 3, editor: 4, manager: 5 };
for (const role of Object.keys(EXPECT) as AccessRole[]) {
  CAPS.forEach((cap, i) => {
    ROLE_CASES.push([
      `${role} ${cap}`,
      { role },
      {},
      { capability: cap },
      i < EXPECT[role] ? null : 'capability',
    ]);
  });
}

const live: ServedTarget = { kind: 'live', versionId: 'v1' };
const branch = (name: string, versionId = 'v2'): ServedTarget => ({ kind: 'branch', name, versionId });
const version = (id: string): ServedTarget => ({ kind: 'version', id });
const TARGETS: Case[] = [];
const TARGET_TABLE: [string, ServedTarget, boolean][] = [
  ['live', live, true],
  ['live', branch('main'), false],
  ['live', version('v1'), false],
  ['all-versions', live, true],
  ['all-versions', branch('x'), true],
  ['all-versions', version('v9'), true],
  ['version:v1', version('v1'), true],
  ['version:v1', version('v2'), false],
  ['version:v1', live, true],
  ['version:v2', live, false],
  ['version:v2', branch('feature', 'v2'), true],
  ['branch:feature', branch('feature'), true],
  ['branch:feature', branch('features'), false],
  ['branch:feature', live, false],
  ['branch:feature', version('v2'), false],
  ['branch:release/1.0', branch('release/1.0'), true],
];
for (const [target, served, ok] of TARGET_TABLE)
  TARGETS.push([
    `${target} on ${JSON.stringify(served)}`,
    { target },
    {},
    { target: served },
    ok ? null : 'target',
  ]);

const PATHS: Case[] = PATH_CASES.map(([paths, path, ok]) => [
  `paths ${paths.join(' ')} on ${path}`,
  { paths },
  {},
  { path },
  ok ? null : 'path',
]);

const T = (iso: string) => new Date(iso);
const TIME: Case[] = [
  ['expiry one ms later', { constraints: { expiresAt: '2026-06-01T12:00:00.001Z' } }, {}, {}, null],
  ['expiry exactly now', { constraints: { expiresAt: '2026-06-01T12:00:00.000Z' } }, {}, {}, 'expired'],
  ['expiry one ms ago', { constraints: { expiresAt: '2026-06-01T11:59:59.999Z' } }, {}, {}, 'expired'],
  [
    'expiry at boundary, asked 1 ms before',
    { constraints: { expiresAt: '2026-06-01T13:00:00.000Z' } },
    {},
    { now: T('2026-06-01T12:59:59.999Z') },
    null,
  ],
  [
    'expiry at boundary, asked at it',
    { constraints: { expiresAt: '2026-06-01T13:00:00.000Z' } },
    {},
    { now: T('2026-06-01T13:00:00.000Z') },
    'expired',
  ],
  ['expiry with offset', { constraints: { expiresAt: '2026-06-01T14:00:00+02:00' } }, {}, {}, 'expired'],
  ['not-before exactly now', { constraints: { notBefore: '2026-06-01T12:00:00.000Z' } }, {}, {}, null],
  [
    'not-before one ms later',
    { constraints: { notBefore: '2026-06-01T12:00:00.001Z' } },
    {},
    {},
    'not_yet_active',
  ],
  ['not-before passed', { constraints: { notBefore: '2026-05-01T00:00:00Z' } }, {}, {}, null],
  [
    'window open',
    { constraints: { notBefore: '2026-05-01T00:00:00Z', expiresAt: '2026-07-01T00:00:00Z' } },
    {},
    {},
    null,
  ],
  [
    'window closed',
    { constraints: { notBefore: '2026-07-01T00:00:00Z', expiresAt: '2026-08-01T00:00:00Z' } },
    {},
    {},
    'not_yet_active',
  ],
  ['revoked', { revokedAt: '2026-05-01T00:00:00Z' }, {}, {}, 'revoked'],
  ['max uses left', { constraints: { maxUses: 3 }, uses: 2 }, {}, {}, null],
  ['max uses spent', { constraints: { maxUses: 3 }, uses: 3 }, {}, {}, 'used_up'],
  ['max uses zero', { constraints: { maxUses: 0 } }, {}, {}, 'used_up'],
];

const CONSTRAINTS: Case[] = [
  [
    'verified e-mail given',
    { constraints: { verifiedEmail: true } },
    { email: 'a@x.org', emailVerified: true },
    {},
    null,
  ],
  [
    'unverified e-mail',
    { constraints: { verifiedEmail: true } },
    { email: 'a@x.org', emailVerified: false },
    {},
    'email',
  ],
  ['no e-mail', { constraints: { verifiedEmail: true } }, {}, {}, 'email'],
  ['e-mail domain', { constraints: { emailDomains: ['x.org'] } }, { email: 'a@X.org' }, {}, null],
  ['other e-mail domain', { constraints: { emailDomains: ['x.org'] } }, { email: 'a@y.org' }, {}, 'email'],
  [
    'subdomain is not the domain',
    { constraints: { emailDomains: ['x.org'] } },
    { email: 'a@sub.x.org' },
    {},
    'email',
  ],
  [
    'verified + domain',
    { constraints: { verifiedEmail: true, emailDomains: ['x.org'] } },
    { email: 'a@x.org', emailVerified: true },
    {},
    null,
  ],
];
const IPS: [string[], string | null, boolean][] = [
  [['10.0.0.0/8'], '10.1.2.3', true],
  [['10.0.0.0/8'], '11.1.2.3', false],
  [['10.0.0.0/8'], '::ffff:10.1.2.3', true],
  [['10.0.0.0/8'], null, false],
  [['10.0.0.0/8'], 'garbage', false],
  [['192.0.2.7'], '192.0.2.7', true],
  [['192.0.2.7'], '192.0.2.8', false],
  [['192.0.2.0/24', '198.51.100.0/24'], '198.51.100.9', true],
  [['2001:db8::/32'], '2001:db8:1::1', true],
  [['2001:db8::/32'], '2001:db9::1', false],
  [['2001:db8::/32'], '10.0.0.1', false],
  [['2001:db8::1'], '2001:db8::1', true],
  [['2001:db8::1'], '2001:db8::2', false],
  [['::/0'], '2001:db8::2', true],
  [['0.0.0.0/0'], '203.0.113.5', true],
  [['0.0.0.0/0'], '2001:db8::2', false],
  [['::ffff:10.0.0.0/104'], '10.9.9.9', true],
  [['10.0.0.0/8', '2001:db8::/32'], '2001:db8::5', true],
];
for (const [ip, addr, ok] of IPS)
  CONSTRAINTS.push([
    `ip ${ip.join(',')} from ${addr}`,
    { constraints: { ip } },
    { ip: addr },
    {},
    ok ? null : 'ip',
  ]);
const COUNTRIES: [Constraints, string | null, boolean][] = [
  [{ countryAllow: ['DE', 'FR'] }, 'DE', true],
  [{ countryAllow: ['DE', 'FR'] }, 'fr', true],
  [{ countryAllow: ['DE', 'FR'] }, 'US', false],
  [{ countryAllow: ['DE'] }, null, false],
  [{ countryDeny: ['RU'] }, 'RU', false],
  [{ countryDeny: ['ru'] }, 'RU', false],
  [{ countryDeny: ['RU'] }, 'DE', true],
  [{ countryDeny: ['RU'] }, null, true],
  [{ countryAllow: ['DE'], countryDeny: ['DE'] }, 'DE', false],
  [{ countryAllow: ['DE', 'AT'], countryDeny: ['AT'] }, 'DE', true],
];
for (const [c, country, ok] of COUNTRIES)
  CONSTRAINTS.push([
    `country ${JSON.stringify(c)} from ${country}`,
    { constraints: c },
    { country },
    {},
    ok ? null : 'country',
  ]);
const UAS: [string[], string | null, boolean][] = [
  [['curl'], 'curl/8.0', false],
  [['curl'], 'Mozilla/5.0', true],
  [['BadBot'], 'Mozilla/5.0 (compatible; badbot/1.1)', false],
  [['BadBot'], null, true],
  [['a', 'b'], 'xbx', false],
];
for (const [uaDeny, ua, ok] of UAS)
  CONSTRAINTS.push([
    `ua deny ${uaDeny} for ${ua}`,
    { constraints: { uaDeny } },
    { userAgent: ua },
    {},
    ok ? null : 'user_agent',
  ]);

describe('one grant, each dimension', () => {
  const all = [...AUDIENCE, ...ROLE_CASES, ...TARGETS, ...PATHS, ...TIME, ...CONSTRAINTS];
  it.each(all)('%s', (_name, g, v, q, expected) => {
    const compiled = compileGrant(grant(g));
    expect(missOf(compiled, v, query(q))).toBe(expected);
    expect(firstMatch([compiled], v, query(q))?.id ?? null).toBe(expected === null ? 'g1' : null);
  });
  it('has at least 200 cases with the tables below', () => {
    expect(all.length + PATH_CASES.length + OVERLAP.length).toBeGreaterThanOrEqual(200);
  });
});

// ---- several grants ------------------------------------------------------------------------------
type Overlap = [string, Partial<Grant>[], Visitor, Partial<AccessQuery>, string | null];
const OVERLAP: Overlap[] = [
  ['no grants: nobody', [], {}, {}, null],
  [
    'public docs + team all: stranger on docs',
    [
      { id: 'pub', paths: ['/docs/**'] },
      { id: 'team', audience: { type: 'team' } },
    ],
    {},
    { path: '/docs/a' },
    'pub',
  ],
  [
    'public docs + team all: stranger elsewhere',
    [
      { id: 'pub', paths: ['/docs/**'] },
      { id: 'team', audience: { type: 'team' } },
    ],
    {},
    { path: '/app' },
    null,
  ],
  [
    'public docs + team all: member elsewhere',
    [
      { id: 'pub', paths: ['/docs/**'] },
      { id: 'team', audience: { type: 'team' } },
    ],
    { teamMember: true },
    { path: '/app' },
    'team',
  ],
  [
    'exclusion is local: another grant still opens it',
    [
      { id: 'a', paths: ['/**', '!/secret/**'] },
      { id: 'b', paths: ['/secret/**'], audience: { type: 'link', credentialId: 'l' } },
    ],
    { credentials: [link('l')] },
    { path: '/secret/x' },
    'b',
  ],
  [
    'exclusion is local: without the other grant, refused',
    [
      { id: 'a', paths: ['/**', '!/secret/**'] },
      { id: 'b', paths: ['/secret/**'], audience: { type: 'link', credentialId: 'l' } },
    ],
    {},
    { path: '/secret/x' },
    null,
  ],
  [
    'exclusion in one grant does not narrow another',
    [
      { id: 'a', paths: ['/**', '!/x'] },
      { id: 'b', paths: ['/**'] },
    ],
    {},
    { path: '/x' },
    'b',
  ],
  [
    'dimensions must meet in ONE grant',
    [
      { id: 'path', paths: ['/a'], audience: { type: 'team' } },
      { id: 'who', paths: ['/b'], audience: { type: 'public' } },
    ],
    {},
    { path: '/a' },
    null,
  ],
  [
    'role from one grant, path from another: refused',
    [
      { id: 'v', paths: ['/**'], role: 'viewer' },
      { id: 'c', paths: ['/blog/**'], role: 'commenter' },
    ],
    {},
    { path: '/docs', capability: 'comments.write' },
    null,
  ],
  [
    'commenter grant covers comments on its path',
    [
      { id: 'v', paths: ['/**'], role: 'viewer' },
      { id: 'c', paths: ['/blog/**'], role: 'commenter' },
    ],
    {},
    { path: '/blog/x', capability: 'comments.write' },
    'c',
  ],
  [
    'expired grant, live one',
    [{ id: 'old', constraints: { expiresAt: '2026-01-01T00:00:00Z' } }, { id: 'new' }],
    {},
    {},
    'new',
  ],
  [
    'revoked grant, other audience',
    [
      { id: 'r', revokedAt: '2026-01-01T00:00:00Z' },
      { id: 't', audience: { type: 'team' } },
    ],
    {},
    {},
    null,
  ],
  [
    'unlimited grant preferred over counted',
    [{ id: 'counted', constraints: { maxUses: 5 } }, { id: 'free' }],
    {},
    {},
    'free',
  ],
  [
    'counted grant when nothing else',
    [
      { id: 'counted', constraints: { maxUses: 5 } },
      { id: 'team', audience: { type: 'team' } },
    ],
    {},
    {},
    'counted',
  ],
  [
    'used-up grant, another counted',
    [
      { id: 'c1', constraints: { maxUses: 1 }, uses: 1 },
      { id: 'c2', constraints: { maxUses: 1 } },
    ],
    {},
    {},
    'c2',
  ],
  ['first of equals wins', [{ id: 'x' }, { id: 'y' }], {}, {}, 'x'],
  ['branch grant on live', [{ id: 'b', target: 'branch:preview' }], {}, {}, null],
  [
    'branch grant + live grant on branch',
    [
      { id: 'l', target: 'live' },
      { id: 'b', target: 'branch:preview' },
    ],
    {},
    { target: branch('preview') },
    'b',
  ],
  [
    'ip-bound machine vs public docs',
    [
      { id: 'm', audience: { type: 'machine', credentialId: 'm' }, constraints: { ip: ['10.0.0.0/8'] } },
      { id: 'd', paths: ['/docs/**'] },
    ],
    { credentials: [{ type: 'machine', id: 'm' }], ip: '8.8.8.8' },
    { path: '/api' },
    null,
  ],
  [
    'ip-bound machine from inside',
    [{ id: 'm', audience: { type: 'machine', credentialId: 'm' }, constraints: { ip: ['10.0.0.0/8'] } }],
    { credentials: [{ type: 'machine', id: 'm' }], ip: '10.0.0.8' },
    { path: '/api' },
    'm',
  ],
  [
    'manager grant reaches access.manage',
    [{ id: 'v' }, { id: 'm', role: 'manager', audience: { type: 'person', userId: 'u' } }],
    { userId: 'u' },
    { capability: 'access.manage' },
    'm',
  ],
  [
    'country-denied public, password fallback',
    [
      { id: 'p', constraints: { countryDeny: ['XX'] } },
      { id: 'pw', audience: { type: 'password', credentialId: 'pw' } },
    ],
    { country: 'XX', credentials: [{ type: 'password', id: 'pw' }] },
    {},
    'pw',
  ],
];

describe('several grants', () => {
  it.each(OVERLAP)('%s', (_name, gs, v, q, expected) => {
    const compiled = gs.map((g) => compileGrant(grant(g)));
    const d = decide(compiled, v, query(q));
    expect(d.grant?.id ?? null).toBe(expected);
    expect(d.allowed).toBe(expected !== null);
    expect(firstMatch(compiled, v, query(q))?.id ?? null).toBe(expected);
    expect(d.misses.length + d.matches.length).toBe(gs.length);
  });
});
