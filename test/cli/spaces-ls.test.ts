import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { type CliEnv, cli, cliEnv } from './helpers.ts';

/** `spaces ls --sort/--search` against a live server: the API's order and filter (`sort`, `q`). */
let t: TestServer;
let e: CliEnv;

beforeAll(async () => {
  t = await startServer();
  const user = await createUser(t, 'cli-sorter');
  for (const title of ['Mangosteen', 'apple', 'Cherry'])
    expect(
      (await t.api('POST', '/v1/spaces', { token: user.token, body: { teamId: user.teamId, title } })).status,
    ).toBe(201);
  e = cliEnv(t.url);
  expect((await cli(e, ['login', '--token', user.token])).code).toBe(0);
});
afterAll(() => t?.close());

it('lists spaces by name, reversed, newest first, and searched', async () => {
  const titles = async (...args: string[]) => {
    const r = await cli(e, ['spaces', 'ls', '--json', ...args]);
    expect(r.code, r.stderr).toBe(0);
    return r.json().map((s: { title: string }) => s.title);
  };
  expect(await titles('--sort', 'name')).toEqual(['apple', 'Cherry', 'Mangosteen']);
  expect(await titles('--sort', '-name')).toEqual(['Mangosteen', 'Cherry', 'apple']);
  expect(await titles()).toEqual(['Cherry', 'apple', 'Mangosteen']);
  expect(await titles('--sort', 'created', '--search', 'NGOSTE')).toEqual(['Mangosteen']);
  const bad = await cli(e, ['spaces', 'ls', '--sort', 'size']);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain('name');
});
