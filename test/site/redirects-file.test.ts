import { describe, expect, it } from 'vitest';
import { parseRedirectsFile } from '../../src/site/redirects-file.ts';

function one(line: string, vars?: Record<string, string>) {
  const r = parseRedirectsFile(line, { vars, secretNames: ['API_TOKEN'] });
  return { rule: r.rules[0], codes: r.diagnostics.map((d) => d.code), diags: r.diagnostics };
}

describe('_redirects grammar', () => {
  it('defaults to 302 and keeps file order', () => {
    const r = parseRedirectsFile('# comment\n\n/a /b\n/c   /d   301 # trailing\n/e /f 308!\n');
    expect(r.diagnostics).toEqual([]);
    expect(r.rules.map((x) => [x.ref, x.kind, x.status, x.force])).toEqual([
      ['_redirects:3', 'redirect', 302, false],
      ['_redirects:4', 'redirect', 301, false],
      ['_redirects:5', 'redirect', 308, true],
    ]);
  });

  const kinds: Array<[string, string, number]> = [
    ['/a /b 200', 'rewrite', 200],
    ['/api/* https://api.example.com/:splat 200', 'proxy', 200],
    ['/x/* /x/404.html 404', 'notFound', 404],
    ['/a https://example.com/ 301', 'redirect', 301],
    ['/a /b 303', 'redirect', 303],
    ['/a /b 307', 'redirect', 307],
  ];
  it.each(kinds)('%s → %s', (line, kind, status) => {
    const { rule, codes } = one(line);
    expect(codes).toEqual([]);
    expect(rule.kind).toBe(kind);
    expect(rule.status).toBe(status);
  });

  it('parses query captures, literal query values, conditions and cache=shared', () => {
    const { rule, codes } = one('/search q=:term page=:p /find?q=:term 301 Country=us,DE Language=en,pt-BR');
    expect(codes).toEqual([]);
    expect(rule.query).toEqual([
      { name: 'q', cap: 'term' },
      { name: 'page', cap: 'p' },
    ]);
    expect(rule.destinationHasQuery).toBe(true);
    expect(rule.conditions).toEqual({ country: ['US', 'DE'], language: ['en', 'pt-br'] });
    const lit = one('/old id=7 /new 301');
    expect(lit.rule.query).toEqual([{ name: 'id', value: '7' }]);
    const c = one('/a/* https://up.example.com/:splat 200 cache=shared Cookie=beta Agent=yes');
    expect(c.codes).toEqual([]);
    expect(c.rule.cacheShared).toBe(true);
    expect(c.rule.conditions).toEqual({ cookie: ['beta'], agent: true });
  });

  it('expands non-secret variables in destinations', () => {
    expect(
      one('/docs {{ vars.DOCS_URL }}/start 301', { DOCS_URL: 'https://docs.example.com' }).rule.destination,
    ).toEqual(['https://docs.example.com/start']);
  });

  const rejected: Array<[string, string]> = [
    ['/a', 'redirect_destination_missing'],
    ['/a 301', 'redirect_destination_missing'],
    ['/a /b 304', 'redirect_status_invalid'],
    ['/a /b 200x', 'redirect_syntax_invalid'],
    ['/a /b 418', 'redirect_status_invalid'],
    ['/a b.html 200', 'redirect_rewrite_target_relative'],
    ['/a ../b 200', 'redirect_rewrite_target_relative'],
    ['/a //evil.com 301', 'redirect_destination_invalid'],
    ['/a javascript:alert(1) 301', 'redirect_destination_invalid'],
    ['/a https://example.com/404.html 404', 'redirect_not_found_absolute'],
    ['/a /a 301', 'redirect_self_loop'],
    ['/a/ /a 301', 'redirect_self_loop'],
    ['/a /a/ 301', 'redirect_self_loop'],
    ['/a /a 200', 'redirect_self_loop'],
    ['/a /b 302 Role=admin', 'redirect_role_unsupported'],
    ['/a /b 302 country=us', 'redirect_condition_unsupported'],
    ['/a /b 302 Geo=us', 'redirect_condition_unsupported'],
    ['/a /b 302 Condition=x', 'redirect_condition_unsupported'],
    ['/a /b 302 Country=usa', 'redirect_condition_invalid'],
    ['/a /b 302 Agent=maybe', 'redirect_condition_invalid'],
    ['/a /b 302 Cookie=', 'redirect_condition_invalid'],
    ['/a /b 302 junk', 'redirect_syntax_invalid'],
    ['/a /b 301 cache=shared', 'redirect_cache_invalid'],
    ['/a q=:1x /b', 'redirect_query_invalid'],
    ['/a q=:x q=:y /b', 'redirect_query_invalid'],
    ['/:x q=:x /b', 'redirect_source_invalid'],
    ['/a/*/b /c', 'redirect_source_invalid'],
    ['a /b', 'redirect_source_invalid'],
    ['/a {{ vars.NOPE }}/x 301', 'template_variable_unresolved'],
    ['/a https://x.com/?t={{vars.API_TOKEN}} 301', 'secret_variable_in_template'],
    [`/a /${'b'.repeat(1000)}`, 'redirect_line_too_long'],
    ['/a /b/../c 301', 'redirect_destination_invalid'],
    ['/a /b/./c 301', 'redirect_destination_invalid'],
    ['/a/:x /b/%2E%2e/:x 301', 'redirect_destination_invalid'],
    ['/a https://example.com/x/.. 301', 'redirect_destination_invalid'],
    ['/a/:u https://:u@example.com/ 301', 'redirect_destination_invalid'],
  ];
  it.each(rejected)('rejects %s (%s)', (line, code) => {
    const { rule, diags } = one(line);
    expect(rule).toBeUndefined();
    expect(diags[0]).toMatchObject({ code, severity: 'error', path: '_redirects:1' });
  });

  it('a `?` inside the fragment is not a query; captures carry their position', () => {
    expect(one('/a /page#a?b 302').rule.destinationHasQuery).toBe(false);
    expect(one('/a /page?k=1#a?b 302').rule.destinationHasQuery).toBe(true);
    expect(one('/a https://example.com#x?y 302').rule.destinationHasQuery).toBe(false);
    const { rule, codes } = one(
      'https://:sub.example.com/s/* q=:q https://:sub.example.org/:splat?q=:q#:q 301',
    );
    expect(codes).toEqual([]);
    expect(rule.destination).toEqual([
      'https://',
      { cap: 'sub', at: 'host' },
      '.example.org/',
      { cap: 'splat', at: 'path', splat: true },
      '?q=',
      { cap: 'q', at: 'query' },
      '#',
      { cap: 'q', at: 'fragment' },
    ]);
    expect(one('/a/..b /c/..d 301').codes).toEqual([]);
  });

  it('handles CRLF, a BOM and fragments in destinations', () => {
    const r = parseRedirectsFile('\uFEFF/a /b#top 301\r\n/c /d\r\n');
    expect(r.diagnostics).toEqual([]);
    expect(r.rules.map((x) => [x.ref, x.destination])).toEqual([
      ['_redirects:1', ['/b#top']],
      ['_redirects:2', ['/d']],
    ]);
  });

  it('accepts a line of exactly 1,000 characters and reports the right line number', () => {
    const line = `/a /${'b'.repeat(996)}`;
    expect(line.length).toBe(1000);
    const r = parseRedirectsFile(`/x /y\n${line}\n/c\n`);
    expect(r.rules).toHaveLength(2);
    expect(r.diagnostics.map((d) => d.path)).toEqual(['_redirects:3']);
  });
});
