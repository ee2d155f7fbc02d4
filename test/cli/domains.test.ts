import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDns, type TestDns } from '../helpers/dns-server.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type CliEnv, cli, cliEnv } from './helpers.ts';

let t: TestServer;
let dns: TestDns;
let e: CliEnv;

beforeAll(async () => {
  dns = await startDns();
  t = await startServer({ env: { SPACES_DNS_SERVERS: dns.address } });
  e = cliEnv(t.url);
  await t.api('POST', '/v1/spaces', { body: { slug: 'domain-site' } });
});
afterAll(async () => {
  await t?.close();
  await dns?.close();
});

it('spaces domains add, ls, verify and rm, in text and --json', async () => {
  expect((await cli(e, ['login', '--token', t.ownerKey])).code).toBe(0);
  expect((await cli(e, ['link', 'domain-site'])).code).toBe(0);

  const add = await cli(e, ['domains', 'add', 'www.example.test']);
  expect(add.code, add.stderr).toBe(0);
  expect(add.stdout).toMatch(/^Added www\.example\.test\./);
  expect(add.stdout).toMatch(/TXT\s+_spaces-challenge\.www\.example\.test\s+spaces-verify=\S+\s+unchecked/);
  expect(add.stdout).toMatch(/CNAME\s+www\.example\.test\s+domain-site\.localhost\s+unchecked/);
  expect(add.stdout).toContain('spaces domains verify www.example.test');

  const ls = await cli(e, ['domains', 'ls', '--json']);
  expect(ls.code, ls.stderr).toBe(0);
  const [d] = ls.json();
  expect(d).toMatchObject({ hostname: 'www.example.test', status: 'pending' });

  const notYet = await cli(e, ['domains', 'verify', 'www.example.test']);
  expect(notYet.code, notYet.stderr).toBe(0);
  expect(notYet.stdout).toMatch(/^Not verified yet/);
  expect(notYet.stdout).toMatch(/TXT\s+\S+\s+\S+\s+missing/);

  const txt = d.records.find((r: { type: string }) => r.type === 'TXT');
  dns.set(txt.name, 'TXT', [txt.value]);
  dns.set('www.example.test', 'CNAME', ['domain-site.localhost.']);
  const ok = await cli(e, ['domains', 'verify', d.id, '--json']);
  expect(ok.code, ok.stderr).toBe(0);
  expect(ok.json()).toMatchObject({ status: 'verified', verified: true });

  const refused = await cli(e, ['domains', 'rm', 'www.example.test']);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain('--yes');
  const rm = await cli(e, ['domains', 'rm', 'www.example.test', '--yes']);
  expect(rm.code, rm.stderr).toBe(0);
  expect(rm.stdout.trim()).toBe('Removed www.example.test.');
  const none = await cli(e, ['domains', 'ls', '--all']);
  expect(none.stdout.trim()).toBe('No domains.');

  const bad = await cli(e, ['domains', 'add', 'https://www.example.test/']);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain('invalid_domain_name');
});
