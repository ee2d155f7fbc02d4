import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { timeOf } from '../../src/cli/commands/logs.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';
import { type CliEnv, cli, cliEnv, cliStart } from './helpers.ts';

// `spaces logs` and `spaces analytics`: the real CLI against a real server whose edge logged real
// requests to a published site.

const HOST = 'cli-logs.localhost';
let t: TestServer;
let e: CliEnv;

function siteGet(path: string, headers: Record<string, string> = {}) {
  return new Promise<number>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: t.port, path, headers: { host: HOST, ...headers }, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  t = await startServer();
  e = { ...cliEnv(t.url), env: { SPACES_TOKEN: t.ownerKey } };
  const space = await createSpace(t, undefined, { slug: 'cli-logs', access: 'public' });
  await publishViaVersions(t, space.id, {
    'index.html': '<h1>home</h1>',
    'docs/a.txt': 'a'.repeat(4096),
  });
  expect(await siteGet('/', { referer: 'https://news.example/' })).toBe(200);
  for (let i = 0; i < 3; i++) expect(await siteGet('/docs/a.txt', { 'user-agent': 'ua-1' })).toBe(200);
  expect(await siteGet('/nope')).toBe(404);
  await t.server.services.accessLog!.flush();
});
afterAll(() => t?.close());

it('spaces logs lists a space’s access log newest first, with filters and --json', async () => {
  const all = await cli(e, ['logs', 'cli-logs', '--access']);
  expect(all.code, all.stderr).toBe(0);
  const rows = all.stdout.trim().split('\n');
  expect(rows[0]).toMatch(/^TIME\s+STATUS\s+METHOD\s+PATH\s+BYTES\s+DURATION\s+REFERRER$/);
  expect(rows).toHaveLength(6);
  expect(rows[1]).toMatch(/\s404\s+GET\s+\/nope\s/);
  expect(all.stdout).toMatch(/200\s+GET\s+\/docs\/a\.txt\s+4\.0 KiB/);
  expect(all.stdout).toContain('https://news.example/');

  const json = await cli(e, ['logs', '--space', 'cli-logs', '--status', '2xx', '--path', '/docs/', '--json']);
  expect(json.code, json.stderr).toBe(0);
  const lines = json.json();
  expect(lines).toHaveLength(3);
  for (const l of lines)
    expect(l).toMatchObject({ path: '/docs/a.txt', status: 200, bytes: 4096, host: HOST });
  // No raw address in what the CLI prints.
  expect(json.stdout).not.toContain('127.0.0.1');

  const limited = await cli(e, ['logs', 'cli-logs', '--limit', '2', '--json']);
  expect(limited.json()).toHaveLength(2);
  const none = await cli(e, ['logs', 'cli-logs', '--since', '2999-01-01T00:00:00Z']);
  expect(none.code).toBe(0);
  expect(none.stdout).toContain('No requests logged yet');

  const badStatus = await cli(e, ['logs', 'cli-logs', '--status', '42']);
  expect(badStatus.code).toBe(2);
  expect(badStatus.stderr).toContain('--status takes');
  const badSince = await cli(e, ['logs', 'cli-logs', '--since', 'yesterday']);
  expect(badSince.code).toBe(2);
  const other = await cli(e, ['logs', 'no-such-space']);
  expect(other.code).toBe(4);
});

it('spaces analytics prints a table for people and the API document with --json', async () => {
  const human = await cli(e, ['analytics', 'cli-logs']);
  expect(human.code, human.stderr).toBe(0);
  expect(human.stdout).toMatch(/^cli-logs: last 7d \(/);
  expect(human.stdout).toMatch(/Requests\s+5/);
  expect(human.stdout).toMatch(/Visitors\s+2/);
  expect(human.stdout).toMatch(/Status\s+2xx 4\s+3xx 0\s+4xx 1\s+5xx 0/);
  expect(human.stdout).toMatch(/TOP PATHS\s+REQUESTS\n\/docs\/a\.txt\s+3/);
  expect(human.stdout).toMatch(/TOP REFERRERS\s+REQUESTS\nhttps:\/\/news\.example\/\s+1/);
  expect(human.stdout).toMatch(/DAY\s+REQUESTS\s+BYTES/);

  const json = await cli(e, ['analytics', '--space', 'cli-logs', '--window', '48h', '--json']);
  expect(json.code, json.stderr).toBe(0);
  const a = json.json();
  expect(a).toMatchObject({ window: '48h', requests: 5, visitors: 2 });
  expect(a.series[0].at).toMatch(/T\d\d:00:00\.000Z$/);
  const hourly = await cli(e, ['analytics', 'cli-logs', '--window', '48h']);
  expect(hourly.stdout).toMatch(/HOUR\s+REQUESTS\s+BYTES/);

  const bad = await cli(e, ['analytics', 'cli-logs', '--window', '1y']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('48h');
});

it('spaces logs --follow prints the last lines, then new requests as NDJSON, filtered', async () => {
  const run = cliStart(e, ['logs', 'cli-logs', '--follow', '--json', '--status', '2xx', '--limit', '2']);
  try {
    const until = async (pred: (lines: any[]) => boolean, ms = 20_000) => {
      const deadline = Date.now() + ms;
      for (;;) {
        const lines = run
          .stdout()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l));
        if (pred(lines)) return lines;
        if (Date.now() > deadline) throw new Error(`no match in:\n${run.stdout()}\n${run.stderr()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    // The last two 2xx lines of the page first.
    await until((l) => l.length >= 2);
    // Give the stream a moment to open, then new requests: a 200 shown, a 404 filtered out.
    await new Promise((r) => setTimeout(r, 500));
    expect(await siteGet('/nope-followed')).toBe(404);
    expect(await siteGet('/docs/a.txt?followed=1')).toBe(200);
    await t.server.services.accessLog!.flush();
    const lines = await until((l) => l.some((x) => x.path === '/docs/a.txt?followed=1'));
    expect(lines.map((l) => l.path)).not.toContain('/nope-followed');
    // Oldest first: the new line is last, and no line is printed twice.
    expect(lines.at(-1).path).toBe('/docs/a.txt?followed=1');
    expect(new Set(lines.map((l) => l.id)).size).toBe(lines.length);
  } finally {
    run.kill();
    await run.done;
  }
}, 30_000);

it('reads --since and --until as ISO times or durations back from now', () => {
  const now = Date.parse('2026-06-01T12:00:00Z');
  expect(timeOf('--since', '2h', now)).toBe('2026-06-01T10:00:00.000Z');
  expect(timeOf('--since', '7d', now)).toBe('2026-05-25T12:00:00.000Z');
  expect(timeOf('--since', '2026-01-31T12:00:00+01:00', now)).toBe('2026-01-31T11:00:00.000Z');
  expect(timeOf('--since', undefined, now)).toBeUndefined();
  expect(() => timeOf('--since', 'soon', now)).toThrow(/ISO time/);
});
