import { FormData, request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

const CACHE_BYTES = 8 * 1024 * 1024;
const TOKEN = 'metrics-token-0123456789';

/** Parses Prometheus text: `name{labels} value` lines into a map keyed by `name{labels}`. */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describeEachDb('GET /metrics', (db) => {
  let t: TestServer;
  let withToken: TestServer;
  beforeAll(async () => {
    t = await startServer({ db, env: { SPACES_CACHE_BYTES: String(CACHE_BYTES) } });
    withToken = await startServer({ db, env: { SPACES_METRICS_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await t?.close();
    await withToken?.close();
  });

  const get = (s: TestServer, headers: Record<string, string> = {}) =>
    request(`${s.url}/metrics`, { headers }).then(async (r) => ({
      status: r.statusCode,
      type: String(r.headers['content-type']),
      text: await r.body.text(),
    }));

  it('shows memory, the edge caches within their bounds, the change feed and the jobs, to a loopback client', async () => {
    // Serve a site so the caches hold something.
    const fd = new FormData();
    fd.append('files', new Blob(['<h1>metered</h1>']), 'index.html');
    fd.set('payload', JSON.stringify({ access: 'public' }));
    const pub = await request(`${t.url}/v1/publish`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.ownerKey}` },
      body: fd,
    });
    const slug = ((await pub.body.json()) as any).data.space.slug;
    const site = await request(`${t.url}/`, { headers: { host: `${slug}.localhost` } });
    expect(await site.body.text()).toContain('metered');

    const r = await get(t);
    expect(r.status).toBe(200);
    expect(r.type).toContain('text/plain; version=0.0.4');
    expect(r.text).toContain('# TYPE spaces_edge_cache_bytes gauge');
    const m = parse(r.text);
    expect(m.get('spaces_process_memory_bytes{kind="rss"}')).toBeGreaterThan(10 * 1024 * 1024);
    expect(m.get('spaces_process_memory_bytes{kind="heap_used"}')).toBeGreaterThan(0);
    // The bounds are SPACES_CACHE_BYTES shared out (half for bodies, a quarter for versions, …).
    expect(m.get('spaces_edge_cache_max_bytes{cache="blobs"}')).toBe(CACHE_BYTES / 2);
    expect(m.get('spaces_edge_cache_max_bytes{cache="versions"}')).toBe(CACHE_BYTES / 4);
    let total = 0;
    for (const cache of ['blobs', 'versions', 'hosts', 'rules']) {
      const bytes = m.get(`spaces_edge_cache_bytes{cache="${cache}"}`)!;
      expect(bytes).toBeLessThanOrEqual(m.get(`spaces_edge_cache_max_bytes{cache="${cache}"}`)!);
      total += bytes;
    }
    expect(total).toBeGreaterThan(0);
    expect(m.get('spaces_edge_cache_entries{cache="hosts"}')).toBeGreaterThanOrEqual(1);
    expect(m.get('spaces_change_feed_connected')).toBe(db === 'postgres' ? 1 : 0);
    expect(m.has('spaces_change_feed_lag_seconds{quantile="0.99"}')).toBe(true);
    expect(m.has('spaces_change_feed_changes_total{via="caught_up"}')).toBe(true);
    expect([...m.keys()].some((k) => k.startsWith('spaces_jobs{kind="blobs.sweep"'))).toBe(true);
    expect(m.has('spaces_event_loop_delay_seconds{quantile="0.99"}')).toBe(true);
  });

  it('refuses a client that came through a proxy when no token is set', async () => {
    const r = await get(t, { 'x-forwarded-for': '203.0.113.9' });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.text)).toMatchObject({ code: 'forbidden' });
    expect((await get(t, { forwarded: 'for=203.0.113.9' })).status).toBe(403);
    // A token is refused when the server has none.
    expect((await get(t, { authorization: `Bearer ${TOKEN}` })).status).toBe(401);
  });

  it('with SPACES_METRICS_TOKEN, asks every client for it', async () => {
    const none = await get(withToken);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.text)).toMatchObject({ code: 'unauthorized' });
    expect((await get(withToken, { authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    const ok = await get(withToken, { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '203.0.113.9' });
    expect(ok.status).toBe(200);
    expect(parse(ok.text).get('spaces_edge_cache_max_bytes{cache="blobs"}')).toBeGreaterThan(0);
  });
});
