import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type Receiver, startReceiver } from '../webhooks/receiver.ts';
import { type CliEnv, cli, cliEnv } from './helpers.ts';

let t: TestServer;
let rx: Receiver;
let e: CliEnv;

beforeAll(async () => {
  rx = await startReceiver();
  t = await startServer({ env: { SPACES_WEBHOOK_ALLOW: 'http,127.0.0.1', SPACES_WORKER: 'off' } });
  e = cliEnv(t.url);
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

it('spaces webhooks add, ls, rotate, deliveries, redeliver and rm', async () => {
  expect((await cli(e, ['login', '--token', t.ownerKey])).code).toBe(0);
  const add = await cli(e, ['webhooks', 'add', `${rx.url}/cli`, '--events', 'version.*,channel.promoted']);
  expect(add.code, add.stderr).toBe(0);
  expect(add.stdout).toMatch(
    /^Added webhook whk_\S+ → http:\/\/127\.0\.0\.1:\d+\/cli \(version\.\*, channel\.promoted\)/,
  );
  expect(add.stdout).toMatch(/Secret: whsec_\S+/);
  const id = /webhook (whk_\S+)/.exec(add.stdout)![1]!;

  const ls = await cli(e, ['webhooks', 'ls', '--json']);
  expect(ls.code, ls.stderr).toBe(0);
  expect(ls.json()).toEqual([expect.objectContaining({ id, status: 'active' })]);

  const rot = await cli(e, ['webhooks', 'rotate', id]);
  expect(rot.code, rot.stderr).toBe(0);
  expect(rot.stdout).toMatch(/New secret: whsec_\S+\nThe previous secret also signs until /);

  const teamId = (await t.api('GET', '/v1/account')).body.data.teams[0].id;
  await t.server.services.store.transaction((_r, tx) =>
    t.server.services.webhookFanout(tx, {
      id: newId('evt'),
      sequence: 1,
      tenantId: teamId,
      spaceId: null,
      actor: { type: 'system', id: null },
      code: 'version.ready',
      message: 'Ready.',
      details: {},
      createdAt: new Date().toISOString(),
    }),
  );
  await t.server.services.jobs.drain();
  const ds = await cli(e, ['webhooks', 'deliveries', id]);
  expect(ds.code, ds.stderr).toBe(0);
  expect(ds.stdout).toMatch(/whd_\S+\s+version\.ready\s+succeeded\s+1\/8\s+200/);
  const deliveryId = /(whd_\S+)/.exec(ds.stdout)![1]!;

  const again = await cli(e, ['webhooks', 'redeliver', deliveryId]);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toMatch(/^Queued whd_\S+: version\.ready/);
  await t.server.services.jobs.drain();
  expect(rx.received.filter((r) => r.path === '/cli')).toHaveLength(2);

  const rm = await cli(e, ['webhooks', 'rm', id, '--yes']);
  expect(rm.code, rm.stderr).toBe(0);
  expect((await cli(e, ['webhooks', 'ls'])).stdout).toContain('No webhooks.');
});
