import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientKind, DISABLED_STATUS, renderPage, type SystemPage } from '../../src/serve/pages.ts';
import { get, serve } from './helpers.ts';

const req = (headers: Record<string, string> = {}, method = 'GET') =>
  ({ headers, method }) as unknown as IncomingMessage;
const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

describe('system pages', () => {
  it('carry the security headers and no-store', () => {
    const p = renderPage(req(HTML), { kind: 'not-found', path: '/x' });
    expect(p.status).toBe(404);
    expect(p.headers['Content-Security-Policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'",
    );
    expect(p.headers['X-Frame-Options']).toBe('DENY');
    expect(p.headers['Referrer-Policy']).toBe('no-referrer');
    expect(p.headers['Cache-Control']).toBe('no-store');
    expect(p.headers['Content-Type']).toBe('text/html; charset=utf-8');
    expect(p.body).toMatch(/^<!doctype html>/);
    expect(p.body).not.toMatch(/(src|href)="https?:/);
  });

  it('cannot be weakened by extra headers', () => {
    const p = renderPage(
      req(HTML),
      { kind: 'unknown-host' },
      { headers: { 'Content-Security-Policy': '*', 'X-Robots-Tag': 'noindex' } },
    );
    expect(p.headers['Content-Security-Policy']).toContain("default-src 'none'");
    expect(p.headers['X-Robots-Tag']).toBe('noindex');
  });

  it.each(Object.entries(DISABLED_STATUS))('disabled %s → %d', (reasonCode, status) => {
    const p = renderPage(req(HTML), { kind: 'disabled', reasonCode });
    expect(p.status).toBe(status);
  });

  it('maps the documented disabled statuses', () => {
    expect(DISABLED_STATUS).toMatchObject({
      anonymous_expired: 410,
      abuse_takedown: 451,
      tenant_suspended: 403,
      site_suspended: 403,
      author_removed: 410,
      publish_failed: 503,
      archived: 410,
    });
    expect(renderPage(req(HTML), { kind: 'disabled', reasonCode: 'who_knows' }).status).toBe(403);
  });

  it('escapes every interpolated value', () => {
    const evil = '<script>alert(1)</script>"\'&';
    const pages: SystemPage[] = [
      { kind: 'unknown-host', host: evil },
      { kind: 'not-found', path: evil },
      { kind: 'unclaimed', expiresAt: evil, claimUrl: `https://x/${evil}` },
      { kind: 'method-not-allowed', allow: 'GET, HEAD', method: evil },
      { kind: 'bad-gateway', detail: evil },
      { kind: 'listing', path: `/${evil}/`, entries: [{ name: evil, directory: false, size: 10 }] },
    ];
    for (const page of pages) {
      const p = renderPage(req(HTML), page, { meta: { title: evil, description: evil } });
      expect(p.body, page.kind).not.toContain('<script>');
      expect(p.body, page.kind).not.toContain('"\'&');
    }
    const unclaimed = renderPage(req(HTML), { kind: 'unclaimed', claimUrl: 'javascript:alert(1)' });
    expect(unclaimed.body).not.toContain('javascript:');
  });

  it('lists directories first with encoded links and sizes', () => {
    const p = renderPage(req(HTML), {
      kind: 'listing',
      path: '/docs/',
      entries: [
        { name: 'b file#1.txt', directory: false, size: 2048 },
        { name: 'a', directory: false, size: 12 },
        { name: 'zdir', directory: true },
      ],
    });
    expect(p.status).toBe(200);
    expect(p.body).toContain('Index of /docs/');
    expect(p.body).toContain('href="../"');
    expect(p.body).toContain('href="b%20file%231.txt"');
    expect(p.body).toContain('2.0 KB');
    expect(p.body).toContain('12 B');
    expect(p.body.indexOf('zdir/')).toBeLessThan(p.body.indexOf('>a<'));
    expect(p.body).not.toContain('noindex');
    expect(renderPage(req(HTML), { kind: 'not-found' }).body).toContain(
      '<meta name="robots" content="noindex">',
    );
    const root = renderPage(req(HTML), { kind: 'listing', path: '/', entries: [] });
    expect(root.body).not.toContain('href="../"');
  });

  it('fills meta tags on system pages with safe links only', () => {
    const p = renderPage(
      req(HTML),
      { kind: 'not-found' },
      {
        meta: { title: 'My site', description: 'About', image: 'https://img/x.png', favicon: 'javascript:x' },
      },
    );
    expect(p.body).toContain('<title>Page not found · My site</title>');
    expect(p.body).toContain('property="og:image" content="https://img/x.png"');
    expect(p.body).not.toContain('javascript:');
    expect(p.body).toContain('Served by Spaces');
    expect(renderPage(req(HTML), { kind: 'not-found' }, { hideBranding: true }).body).not.toContain(
      'Served by',
    );
  });

  it('gives machine clients problem JSON and text clients one line', () => {
    const j = renderPage(req({ accept: 'application/json' }), {
      kind: 'disabled',
      reasonCode: 'abuse_takedown',
    });
    expect(j.status).toBe(451);
    expect(j.headers['Content-Type']).toBe('application/problem+json');
    expect(JSON.parse(j.body)).toMatchObject({ status: 451, code: 'space_disabled', page: 'denied' });
    const t = renderPage(req({ accept: 'text/plain' }), { kind: 'not-found' });
    expect(t.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(t.body.trim().split('\n')).toHaveLength(1);
    expect(clientKind(req({ accept: '*/*' }))).toBe('html');
    expect(clientKind(req({}))).toBe('html');
    expect(clientKind(req({ accept: '*/*', 'sec-fetch-dest': 'empty' }))).toBe('json');
    expect(clientKind(req({ accept: 'application/problem+json, text/html;q=0.5' }))).toBe('json');
    expect(clientKind(req(HTML))).toBe('html');
    expect(clientKind(req({ accept: 'application/json, text/plain, */*' }))).toBe('json');
    expect(clientKind(req({ accept: 'text/plain, */*;q=0.1' }))).toBe('text');
    expect(clientKind(req({ accept: 'image/png' }))).toBe('html');
    expect(clientKind(req({ accept: 'text/html;q=0.1, application/json;q=0.1' }))).toBe('html');
    expect(clientKind(req({ accept: 'text/html;q=0.1, application/json;q=0.2' }))).toBe('json');
  });

  it('sends 405 with Allow, and HEAD without a body, over HTTP', async () => {
    const { sendSystemPage } = await import('../../src/serve/pages.ts');
    const srv = await serve((rq, rs) =>
      sendSystemPage(rq, rs, { kind: 'method-not-allowed', allow: 'GET, HEAD' }),
    );
    try {
      const r = await get(srv.url, { method: 'POST' });
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
      const h = await get(srv.url, { method: 'HEAD' });
      expect(h.body.length).toBe(0);
      expect(Number(h.headers['content-length'])).toBeGreaterThan(0);
    } finally {
      await srv.close();
    }
  });
});
