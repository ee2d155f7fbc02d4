import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type CliEnv, cli, cliEnv } from './helpers.ts';

let t: TestServer;
let e: CliEnv;

beforeAll(async () => {
  t = await startServer();
  e = cliEnv(t.url);
  await t.api('POST', '/v1/spaces', { body: { slug: 'activity-site' } });
  await t.api('PUT', '/v1/spaces/activity-site/variables/GREETING', { body: { value: 'hi' } });
});
afterAll(() => t?.close());

it('spaces activity lists a space’s events, filters by code, and prints JSON', async () => {
  expect((await cli(e, ['login', '--token', t.ownerKey])).code).toBe(0);
  const all = await cli(e, ['activity', '--space', 'activity-site']);
  expect(all.code, all.stderr).toBe(0);
  expect(all.stdout).toMatch(/variable\.updated\s+Variable GREETING of activity-site was created\./);
  expect(all.stdout).toMatch(/space\.created\s+Space activity-site was created\./);
  // Newest first.
  expect(all.stdout.indexOf('variable.updated')).toBeLessThan(all.stdout.indexOf('space.created'));

  const filtered = await cli(e, ['activity', '--space', 'activity-site', '--code', 'space.*', '--json']);
  expect(filtered.code, filtered.stderr).toBe(0);
  const events = filtered.json();
  expect(events.map((x: { code: string }) => x.code)).toEqual(['space.created']);

  const account = await cli(e, ['activity', '--code', 'variable.updated', '--json']);
  expect(account.json().map((x: { details: { name: string } }) => x.details.name)).toContain('GREETING');

  const bad = await cli(e, ['activity', '--code', 'nope']);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain('invalid_event_code');
  const follow = await cli(e, ['activity', '--follow']);
  expect(follow.code).not.toBe(0);
  expect(follow.stderr).toContain('--follow needs --space');
});
