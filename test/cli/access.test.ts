import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type CliEnv, cli, cliEnv } from './helpers.ts';

let t: TestServer;
let e: CliEnv;
let spaceId: string;

beforeAll(async () => {
  t = await startServer();
  e = cliEnv(t.url);
  const s = await t.api('POST', '/v1/spaces', { body: { access: 'private' } });
  spaceId = s.body.data.space?.id ?? s.body.data.id;
});
afterAll(() => t?.close());

it('spaces access: grant, check, link, machine, password, rotate, revoke, logout-all', async () => {
  expect((await cli(e, ['login', '--token', t.ownerKey])).code).toBe(0);
  const sp = ['--space', spaceId];
  const grant = await cli(e, [...sp, 'access', 'grant', 'public', '--paths', '/docs/**,!/docs/internal/**']);
  expect(grant.code, grant.stderr).toBe(0);
  const grantId = /grant (grt_\S+):/.exec(grant.stdout)![1]!;
  const check = await cli(e, [...sp, 'access', 'check', '/docs/a']);
  expect(check.stdout).toContain(`through grant ${grantId}`);
  const no = await cli(e, [...sp, 'access', 'check', '/docs/internal/a']);
  expect(no.stdout).toContain(`${grantId}: path`);
  const ls = await cli(e, [...sp, 'access', 'grants', '--json']);
  expect(ls.json()).toEqual([
    expect.objectContaining({ id: grantId, paths: ['/docs/**', '!/docs/internal/**'] }),
  ]);

  const link = await cli(e, [...sp, 'access', 'link', '--landing', '/docs/a', '--role', 'viewer']);
  expect(link.code, link.stderr).toBe(0);
  expect(link.stdout).toMatch(/\/docs\/a\?__=sl_/);
  const linkId = /link (lnk_\S+)/.exec(link.stdout)![1]!;
  expect((await cli(e, [...sp, 'access', 'links'])).stdout).toContain(linkId);

  const machine = await cli(e, [...sp, 'access', 'machine', '--name', 'ci']);
  expect(machine.stdout).toMatch(/Token: smc_/);
  const machineId = /credential (mch_\S+)/.exec(machine.stdout)![1]!;
  const rotated = await cli(e, [...sp, 'access', 'rotate', 'machine', machineId]);
  expect(rotated.stdout).toMatch(/New token: smc_/);

  const pw = await cli(e, [...sp, 'access', 'password', '--paths', '/secret/**'], { stdin: 'open sesame\n' });
  expect(pw.code, pw.stderr).toBe(0);
  const pwId = /credential (pwc_\S+)/.exec(pw.stdout)![1]!;
  expect((await cli(e, [...sp, 'access', 'credentials', 'password'])).stdout).toContain(pwId);
  expect((await cli(e, [...sp, '--yes', 'access', 'rm', 'password', pwId])).code).toBe(0);
  expect((await cli(e, [...sp, 'access', 'unlink', linkId])).code).toBe(0);
  expect((await cli(e, [...sp, 'access', 'revoke', grantId])).code).toBe(0);
  expect((await cli(e, [...sp, '--yes', 'access', 'logout-all'])).stdout).toContain('ended');
});
