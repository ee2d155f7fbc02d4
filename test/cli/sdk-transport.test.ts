import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SDK_USER_AGENT } from '../../src/sdk/index.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type CliEnv, cli, cliEnv, writeSite } from './helpers.ts';

/**
 * The CLI's HTTP layer is the SDK (issue #27): every request the real `spaces` bin sends carries the
 * SDK transport's product token in `User-Agent` — only src/sdk/transport.ts sets it — and the CLI's
 * own client module is gone. A pass-through proxy in front of the real server records what arrives.
 */
let t: TestServer;
let e: CliEnv;
let proxy: http.Server;
const seen: Array<{ method: string; url: string; ua: string; status: number }> = [];

beforeAll(async () => {
  t = await startServer();
  const target = new URL(t.url);
  proxy = http.createServer((req, res) => {
    const up = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (r) => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          ua: req.headers['user-agent'] ?? '',
          status: r.statusCode ?? 0,
        });
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  e = cliEnv(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await new Promise((r) => proxy?.close(r));
  await t?.close();
});

it('sends every command’s requests through the SDK transport; the old client module is gone', async () => {
  expect(fs.existsSync(path.resolve(import.meta.dirname, '../../src/cli/http.ts'))).toBe(false);
  expect((await cli(e, ['login', '--token', t.ownerKey])).code).toBe(0);
  const site = path.join(e.cwd, 'site');
  writeSite(site, 3);
  const published = await cli(e, ['publish', site, '--json']);
  expect(published.code, published.stderr).toBe(0);
  const spaceId = published.json().space.id as string;
  for (const args of [
    ['spaces', 'ls', '--json'],
    ['versions', 'ls', '--space', spaceId, '--json'],
    ['versions', 'files', '--space', spaceId, '--json'],
    ['domains', 'ls', '--space', spaceId, '--json'],
    ['access', 'grants', '--space', spaceId, '--json'],
  ]) {
    const r = await cli(e, args);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  }
  // A problem the server answers still renders as the CLI always showed it.
  const missing = await cli(e, ['versions', 'ls', '--space', 'no-such-space']);
  expect(missing.code).toBe(4);
  expect(missing.stderr).toMatch(/^Error: .+ \(404\)\n/);
  expect(missing.stderr).toContain('code: not_found');

  const api = seen.filter((s) => s.url.startsWith('/v1/'));
  expect(api).toEqual(seen);
  expect(api.length).toBeGreaterThan(8);
  for (const s of api) expect(s.ua, `${s.method} ${s.url}`).toBe(`spaces-cli ${SDK_USER_AGENT}`);
  // The typed paths the commands call, each seen on the wire.
  for (const p of [
    /^GET \/v1\/spaces\?/,
    /^POST \/v1\/spaces\/[^/]+\/versions$/,
    /^POST \/v1\/spaces\/[^/]+\/versions\/[^/]+\/finalize$/,
    /^GET \/v1\/spaces\/[^/]+\/versions\/latest\/files\?limit=100$/,
    /^GET \/v1\/spaces\/[^/]+\/domains$/,
    /^GET \/v1\/spaces\/[^/]+\/grants$/,
  ])
    expect(
      api.some((s) => p.test(`${s.method} ${s.url}`)),
      `${p}`,
    ).toBe(true);
});
