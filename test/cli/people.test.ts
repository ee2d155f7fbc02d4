import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type CliEnv, cli, cliEnv } from './helpers.ts';

let t: TestServer;
let e: CliEnv;

beforeAll(async () => {
  // Mail goes to files (the default); no worker needed to check the API's answers.
  t = await startServer({ env: { SPACES_WORKER: 'off' } });
  e = cliEnv(t.url);
});
afterAll(async () => {
  await t?.close();
});

it('spaces people invite, ls, grant, resend, rm and spaces requests ls, approve, deny', async () => {
  expect((await cli(e, ['login', '--token', t.ownerKey])).code).toBe(0);
  const space = (await t.api('POST', '/v1/spaces', { body: { slug: 'cli-people', access: 'private' } })).body
    .data.space;
  const s = ['--space', space.slug];

  const inv = await cli(e, [
    'people',
    'invite',
    'ann@example.test',
    '--role',
    'commenter',
    '--paths',
    '/docs/**',
    ...s,
  ]);
  expect(inv.code, inv.stderr).toBe(0);
  expect(inv.stdout).toMatch(
    /^Invited ann@example\.test \(per_\S+\) as commenter of \/docs\/\*\*\. An e-mail/,
  );
  const id = /\((per_\S+)\)/.exec(inv.stdout)![1]!;

  const bad = await cli(e, ['people', 'invite', 'bob@example.test', '--role', 'owner', ...s]);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain('--role is one of viewer, commenter, editor, manager');

  const ls = await cli(e, ['people', 'ls', '--json', ...s]);
  expect(ls.json()).toEqual([
    expect.objectContaining({
      id,
      email: 'ann@example.test',
      status: 'invited',
      grants: [expect.objectContaining({ role: 'commenter' })],
    }),
  ]);

  const grant = await cli(e, ['people', 'grant', id, '--paths', '/a/**,/b/**', ...s]);
  expect(grant.code, grant.stderr).toBe(0);
  expect(grant.stdout).toBe('ann@example.test may now: viewer /a/** /b/**.\n');

  const resend = await cli(e, ['people', 'resend', id, ...s]);
  expect(resend.stdout).toContain('the previous one no longer works');

  const rm = await cli(e, ['people', 'rm', id, '--yes', ...s]);
  expect(rm.code, rm.stderr).toBe(0);
  expect((await cli(e, ['people', 'ls', '--json', ...s])).json()).toEqual([]);

  // Two confirmed requests (the visitor's half runs on the site host).
  const row = (await t.server.services.store.repos.spaces.byId(space.id))!;
  for (const email of ['cy@example.test', 'di@example.test']) {
    await t.server.services.people.request(row, { email, path: '/x' });
  }
  const rows = await t.server.services.store.repos.accessRequests.list(space.id, 'unverified', null, 10);
  for (const r of rows)
    await t.server.services.store.repos.accessRequests.markVerified(r.id, new Date().toISOString());

  const reqs = await cli(e, ['requests', 'ls', '--json', ...s]);
  const list = reqs.json() as { id: string; email: string }[];
  expect(list.map((r) => r.email).sort()).toEqual(['cy@example.test', 'di@example.test']);
  const cy = list.find((r) => r.email === 'cy@example.test')!.id;
  const di = list.find((r) => r.email === 'di@example.test')!.id;
  const ok = await cli(e, ['requests', 'approve', cy, '--role', 'viewer', ...s]);
  expect(ok.stdout).toMatch(/^Approved: cy@example\.test is person per_\S+ and was sent a sign-in link\./);
  expect((await cli(e, ['requests', 'deny', di, ...s])).stdout).toBe(
    'Denied the request of di@example.test.\n',
  );
  expect((await cli(e, ['requests', 'ls', ...s])).stdout).toBe('No access requests waiting.\n');
  const all = (await cli(e, ['requests', 'ls', '--all', '--json', ...s])).json() as { status: string }[];
  expect(all.map((r) => r.status).sort()).toEqual(['approved', 'denied']);
});
