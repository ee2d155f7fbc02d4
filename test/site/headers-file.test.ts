import { describe, expect, it } from 'vitest';
import { canonicalHeaderName, parseHeadersFile } from '../../src/site/headers-file.ts';

describe('_headers grammar', () => {
  it('parses blocks, removals, comments, captures and canonical names', () => {
    const r = parseHeadersFile(
      [
        '# security',
        '/*',
        '  x-frame-options: DENY',
        '\t! X-Powered-By',
        '',
        'https://:sub.example.com/docs/:page',
        '  X-Page: :sub/:page',
        '/assets/*',
        '  Cache-Control: public, max-age=31536000, immutable',
        '  Set-Cookie: seen=1; Path=/; HttpOnly',
      ].join('\n'),
    );
    expect(r.rules.map((b) => [b.ref, b.ops])).toEqual([
      [
        '_headers:2',
        [
          { name: 'X-Frame-Options', value: ['DENY'] },
          { name: 'X-Powered-By', remove: true },
        ],
      ],
      ['_headers:6', [{ name: 'X-Page', value: [{ cap: 'sub' }, '/', { cap: 'page' }] }]],
      [
        '_headers:8',
        [
          { name: 'Cache-Control', value: ['public, max-age=31536000, immutable'] },
          { name: 'Set-Cookie', value: ['seen=1; Path=/; HttpOnly'] },
        ],
      ],
    ]);
    expect(r.diagnostics).toEqual([
      expect.objectContaining({
        code: 'header_cache_control_platform_managed',
        severity: 'warning',
        path: '_headers:9',
      }),
    ]);
  });

  it('canonicalises names', () => {
    expect(canonicalHeaderName('content-SECURITY-policy')).toBe('Content-Security-Policy');
  });

  const rejected: Array<[string, string]> = [
    ['/a\n  Basic-Auth: user:pass', 'header_basic_auth_unsupported'],
    ['/a\n  Content-Length: 5', 'header_forbidden'],
    ['/a\n  transfer-encoding: chunked', 'header_forbidden'],
    ['/a\n  Connection: close', 'header_forbidden'],
    ['/a\n  Keep-Alive: 5', 'header_forbidden'],
    ['/a\n  Location: https://evil.com', 'header_forbidden'],
    ['/a\n  Strict-Transport-Security: max-age=1', 'header_forbidden'],
    ['/a\n  Cloudflare-CDN-Cache-Control: max-age=1', 'header_forbidden'],
    ['/a\n  Surrogate-Control: max-age=1', 'header_forbidden'],
    ['/a\n  X-Accel-Redirect: /secret', 'header_forbidden'],
    ['/a\n  ! Content-Encoding', 'header_forbidden'],
    ['/a\n  Set-Cookie: s=1; Domain=example.com', 'header_set_cookie_domain'],
    ['/a\n  Set-Cookie: s=1;domain=.x.com', 'header_set_cookie_domain'],
    ['/a\n  Set-Cookie: nonsense', 'header_value_invalid'],
    ['/a\n  X-A: one\rtwo', 'header_value_invalid'],
    ['/a\n  X-A: nul\u0000', 'header_value_invalid'],
    ['/a\n  X A: b', 'header_name_invalid'],
    ['/a\n  X_A: b', 'header_name_invalid'],
    ['/a\n  novalue', 'header_syntax_invalid'],
    ['  X-A: before any matcher', 'header_syntax_invalid'],
    ['/img*\n  X-A: b', 'header_matcher_invalid'],
    ['https://example.com:8443/*\n  X-A: b', 'header_matcher_invalid'],
    [`/a\n  X-A: ${'v'.repeat(2000)}`, 'header_line_too_long'],
  ];
  it.each(rejected)('rejects %j (%s)', (text, code) => {
    const r = parseHeadersFile(text);
    expect(r.rules).toEqual([]);
    expect(r.diagnostics[0]).toMatchObject({ code, severity: 'error' });
  });

  // Header injection (issue #17): every way a value could carry a byte the author did not validly
  // write — latin1 writes U+010D U+010A as CR LF — is refused here, at the value's own line.
  const smuggled: Array<[string, string, string, string]> = [
    ['CR', '/a\n  X-A: one\rSet-Cookie: x=1', 'header_value_invalid', '_headers:2'],
    [
      'LF (the next line is a matcher)',
      '/a\n  X-A: one\nSet-Cookie: x=1',
      'header_matcher_invalid',
      '_headers:3',
    ],
    ['NUL', '/a\n  X-A: nul\u0000x', 'header_value_invalid', '_headers:2'],
    ['C1 NEL', '/a\n  X-A: a\u0085b', 'header_value_invalid', '_headers:2'],
    ['U+0100', '/a\n  X-A: \u0100', 'header_value_invalid', '_headers:2'],
    [
      'U+010D U+010A',
      '/a\n  X-A: x\u010d\u010aSet-Cookie: s=1; Domain=example.com',
      'header_value_invalid',
      '_headers:2',
    ],
    [
      'U+010D U+010A inside Set-Cookie',
      '/a\n  Set-Cookie: a=1\u010d\u010aSet-Cookie: s=1; Domain=example.com',
      'header_value_invalid',
      '_headers:2',
    ],
    ['U+FFFF', '/a\n\n  X-A: x\uffff', 'header_value_invalid', '_headers:3'],
    ['astral', '/a\n  X-A: \u{1F600}', 'header_value_invalid', '_headers:2'],
    ['U+2028 inside', '/a\n  X-A: a\u2028b', 'header_value_invalid', '_headers:2'],
    ['U+2028 at the end', '/a\n  X-A: a\u2028', 'header_value_invalid', '_headers:2'],
    ['U+2029', '/a\n  X-A: a\u2029Set-Cookie: x=1', 'header_value_invalid', '_headers:2'],
    ['obs-fold', '/a\n  X-A: one\n   ; Domain=example.com', 'header_syntax_invalid', '_headers:3'],
    [
      'obs-fold with tab',
      '/a\n  Set-Cookie: s=1\n\tDomain=example.com',
      'header_syntax_invalid',
      '_headers:3',
    ],
    ['an empty value', '/a\n  X-A:', 'header_value_empty', '_headers:2'],
    ['a blank value', '/a\n\n  X-A: \t ', 'header_value_empty', '_headers:3'],
  ];
  it.each(smuggled)('refuses %s at its line', (_label, text, code, path) => {
    const r = parseHeadersFile(text);
    expect(r.diagnostics).toContainEqual(expect.objectContaining({ code, path, severity: 'error' }));
    // Nothing of the offending line is compiled into a rule.
    expect(JSON.stringify(r.rules)).not.toMatch(/Domain|x=1|[\u0080-\uffff]/u);
  });

  it('keeps Latin-1 values (sent as obs-text bytes) and says why a fold is refused', () => {
    const latin = parseHeadersFile('/a\n  X-Name: café');
    expect(latin.diagnostics).toEqual([]);
    expect(latin.rules[0]!.ops).toEqual([{ name: 'X-Name', value: ['café'] }]);
    const fold = parseHeadersFile('/a\n  X-A: one\n    two');
    expect(fold.diagnostics[0]!.message).toContain('obs-fold');
    const empty = parseHeadersFile('/a\n  X-A:');
    expect(empty.diagnostics[0]!.fix).toContain('! X-A');
  });

  it('caps blocks at 100', () => {
    const ok = Array.from({ length: 100 }, (_, i) => `/p${i}\n  X-N: ${i}`).join('\n');
    expect(parseHeadersFile(ok).diagnostics).toEqual([]);
    const over = parseHeadersFile(`${ok}\n/p100\n  X-N: 100`);
    expect(over.rules).toHaveLength(100);
    expect(over.diagnostics.map((d) => d.code)).toEqual(['header_blocks_over_limit']);
  });
});
