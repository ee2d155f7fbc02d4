import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

describe('visitor attributes from trusted proxies', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({
      env: {
        SPACES_TRUSTED_PROXIES: '127.0.0.1',
        SPACES_TRUSTED_PROXY_HEADERS: 'country=x-country,ja3=x-ja3',
      },
    });
    const s = await createSpace(t, undefined, {
      slug: 'fw-site',
      access: 'public',
      config: {
        firewall: [
          { name: 'no-de', action: 'block', status: 451, match: { country: 'DE' } },
          { name: 'bad-ip', action: 'block', match: { ip: '203.0.113.0/24' } },
          { name: 'bad-tls', action: 'block', match: { ja3: { op: 'startsWith', value: 'dead' } } },
        ],
      },
    });
    await publishViaVersions(t, s.id, { 'index.html': 'ok' });
  });
  afterAll(() => t.close());

  const get = (headers: Record<string, string>) =>
    t.api('GET', '/', { token: null, host: 'fw-site.localhost', headers });

  it('uses the country, client IP and TLS fingerprint a trusted proxy reports', async () => {
    expect((await get({})).status).toBe(200);
    expect((await get({ 'x-country': 'de' })).status).toBe(451);
    expect((await get({ 'x-country': 'FR' })).status).toBe(200);
    expect((await get({ 'x-forwarded-for': '203.0.113.9' })).status).toBe(403);
    expect((await get({ 'x-forwarded-for': '198.51.100.1' })).status).toBe(200);
    expect((await get({ 'x-ja3': 'deadbeef' })).status).toBe(403);
  });

  it('validates the settings at start', () => {
    expect(() => loadConfig({ SPACES_TRUSTED_PROXY_HEADERS: 'city=x-city' })).toThrow(ConfigError);
    expect(() => loadConfig({ SPACES_TRUSTED_PROXIES: 'not-an-ip' })).toThrow(ConfigError);
    expect(() => loadConfig({ SPACES_GEOIP_DB: '/nonexistent/GeoLite2.mmdb' })).toThrow(ConfigError);
  });
});

describe('untrusted peers', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ env: { SPACES_TRUSTED_PROXY_HEADERS: 'country=x-country' } });
    const s = await createSpace(t, undefined, {
      slug: 'fw2',
      access: 'public',
      config: {
        firewall: [
          { action: 'block', match: { country: 'DE' } },
          { action: 'block', match: { ip: '203.0.113.0/24' } },
        ],
      },
    });
    await publishViaVersions(t, s.id, { 'index.html': 'ok' });
  });
  afterAll(() => t.close());

  it('ignores forwarded headers from peers that are not trusted proxies', async () => {
    const res = await t.api('GET', '/', {
      token: null,
      host: 'fw2.localhost',
      headers: { 'x-country': 'DE', 'x-forwarded-for': '203.0.113.9' },
    });
    expect(res.status).toBe(200);
  });
});
