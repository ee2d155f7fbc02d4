import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { nextRun } from '../../src/domain/crons/schedule.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/**
 * Crons (behaviour §4.8) end to end: the live version's `crons` scheduled when it goes live, a tick
 * through the real job queue on a moved clock, the request through the site edge to a real workerd
 * handler with `x-service-cron` and the space's CRON_SECRET, failures kept, a manual run without the
 * cron header, one run per due time however many ticks, a private site's crons, and the header
 * refused from visitors.
 */

const at = (iso: string) => new Date(iso);
const next = (schedule: string, after: string) => nextRun(schedule, at(after)).toISOString();

describe('cron schedules', () => {
  it('names, intervals and crontab lines, in UTC', () => {
    expect(next('hourly', '2026-03-10T10:15:00Z')).toBe('2026-03-10T11:00:00.000Z');
    expect(next('hourly', '2026-03-10T10:00:00Z')).toBe('2026-03-10T11:00:00.000Z');
    expect(next('daily', '2026-03-10T10:15:00Z')).toBe('2026-03-11T00:00:00.000Z');
    expect(next('twicedaily', '2026-03-10T10:15:00Z')).toBe('2026-03-10T12:00:00.000Z');
    expect(next('twicedaily', '2026-03-10T12:00:00Z')).toBe('2026-03-11T00:00:00.000Z');
    // 2026-03-10 is a Tuesday: weekly is Sunday 00:00.
    expect(next('weekly', '2026-03-10T10:15:00Z')).toBe('2026-03-15T00:00:00.000Z');
    expect(next('6h', '2026-03-10T10:15:00Z')).toBe('2026-03-10T12:00:00.000Z');
    expect(next('5h', '2026-03-10T20:15:00Z')).toBe('2026-03-11T00:00:00.000Z'); // from midnight: 0,5,10,15,20
    expect(next('1h', '2026-03-10T10:15:00Z')).toBe('2026-03-10T11:00:00.000Z');
    expect(next('7d', '2026-03-10T06:00:00Z')).toBe('2026-03-10T07:00:00.000Z'); // daily at 07:00
    expect(next('7d', '2026-03-10T07:00:00Z')).toBe('2026-03-11T07:00:00.000Z');
    expect(next('1w', '2026-03-10T10:00:00Z')).toBe('2026-03-16T00:00:00.000Z'); // Tuesday → Monday
    expect(next('6w', '2026-03-10T10:00:00Z')).toBe('2026-03-14T00:00:00.000Z'); // Saturday
    expect(next('*/15 * * * *', '2026-03-10T10:15:00Z')).toBe('2026-03-10T10:30:00.000Z');
    expect(next('0 7 * * 1-5', '2026-03-13T08:00:00Z')).toBe('2026-03-16T07:00:00.000Z'); // Fri → Mon
    expect(next('30 9,17 * * *', '2026-03-10T10:00:00Z')).toBe('2026-03-10T17:30:00.000Z');
    expect(next('0 0 1 */3 *', '2026-03-10T10:00:00Z')).toBe('2026-04-01T00:00:00.000Z');
    expect(next('0 12 * * 7', '2026-03-10T10:00:00Z')).toBe('2026-03-15T12:00:00.000Z'); // 7 is Sunday
    // Day of month and day of week both set: either one is enough (crontab's rule).
    expect(next('0 0 13 * 5', '2026-03-10T10:00:00Z')).toBe('2026-03-13T00:00:00.000Z');
    expect(next('0 0 20 * 3', '2026-03-10T10:00:00Z')).toBe('2026-03-11T00:00:00.000Z');
    expect(next('0 0 29 2 *', '2026-03-10T10:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
  });
});

const HANDLER = `
const calls = [];
export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/api/calls') return Response.json(calls);
    calls.push({ path: url.pathname, cron: request.headers.get('x-service-cron'), auth: request.headers.get('authorization'), ua: request.headers.get('user-agent') });
    if (url.pathname === '/api/fail') return new Response('boom: the digest store is down', { status: 500 });
    return new Response('ok ' + url.pathname);
  },
};
`;

describeEachDb('crons', (db) => {
  const clock = new ManualClock(Date.parse('2026-03-10T10:02:00.000Z'));
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db, clock });
  });
  afterAll(async () => {
    await t?.close();
  });

  const jobs = () => t.server.services.jobs;
  const runDue = async () => {
    await jobs().ensureSchedules();
    await jobs().drain();
    await jobs().idle();
  };
  const crons = async (spaceId: string) => (await t.api('GET', `/v1/spaces/${spaceId}/crons`)).body.data;

  it('runs the live version’s crons on schedule through the edge, keeps failures, and runs one manually', async () => {
    const space = await createSpace(t, undefined, { slug: `cron-${db[0]}`, access: 'public' });
    const host = `${space.slug}.localhost`;
    await t.api('PUT', `/v1/spaces/${space.id}/variables/CRON_SECRET`, {
      body: { value: 'cron-s3cret', secret: true },
    });
    const first = await publishViaVersions(t, space.id, {
      'index.html': 'home',
      'handler.js': HANDLER,
      'spaces.json': JSON.stringify({
        runtime: { kind: 'functions' },
        crons: [
          { path: '/api/digest', schedule: 'hourly' },
          { path: '/api/fail', schedule: '*/5 * * * *' },
        ],
      }),
    });
    const listed = await crons(space.id);
    expect(listed.map((c: { key: string }) => c.key)).toEqual(['api-digest', 'api-fail']);
    expect(listed[0]).toMatchObject({
      path: '/api/digest',
      schedule: 'hourly',
      nextRunAt: '2026-03-10T11:00:00.000Z',
      lastRun: null,
      lastFailure: null,
    });
    expect(listed[1].nextRunAt).toBe('2026-03-10T10:05:00.000Z');

    // Nothing is due yet.
    await runDue();
    const calls = async () => (await t.api('GET', '/api/calls', { token: null, host })).body;
    expect(await calls()).toEqual([]);

    // 10:05: the failing cron runs once; its failure is kept.
    clock.set(Date.parse('2026-03-10T10:05:30.000Z'));
    await runDue();
    let now = await crons(space.id);
    expect(now[1]).toMatchObject({
      nextRunAt: '2026-03-10T10:10:00.000Z',
      lastRun: { status: 500, trigger: 'schedule' },
      lastFailure: { status: 500, trigger: 'schedule' },
    });
    expect(now[1].lastFailure.message).toContain('boom: the digest store is down');
    expect(now[0].lastRun).toBeNull();

    // 11:00: both are due (the failing one's 10:10 was missed while nothing ran: it runs once).
    clock.set(Date.parse('2026-03-10T11:00:10.000Z'));
    await runDue();
    const seen = await calls();
    expect(seen.filter((c: { path: string }) => c.path === '/api/fail')).toHaveLength(2);
    const digest = seen.filter((c: { path: string }) => c.path === '/api/digest');
    expect(digest).toEqual([
      { path: '/api/digest', cron: 'api-digest', auth: 'Bearer cron-s3cret', ua: 'Spaces-Cron/1.0' },
    ]);
    now = await crons(space.id);
    expect(now[0]).toMatchObject({
      nextRunAt: '2026-03-10T12:00:00.000Z',
      lastRun: { status: 200, trigger: 'schedule' },
      lastFailure: null,
    });

    // A manual run: now, without the cron header, recorded; the schedule is unchanged.
    const manual = await t.api('POST', `/v1/spaces/${space.id}/crons/api-digest/run`);
    expect(manual.status).toBe(200);
    expect(manual.body.data.run).toMatchObject({ status: 200, ok: true, failure: null });
    expect(manual.body.data.cron).toMatchObject({
      lastRun: { trigger: 'manual', status: 200 },
      nextRunAt: '2026-03-10T12:00:00.000Z',
    });
    const last = (await calls()).at(-1);
    expect(last).toMatchObject({ path: '/api/digest', cron: null, auth: 'Bearer cron-s3cret' });
    const failRun = await t.api('POST', `/v1/spaces/${space.id}/crons/api-fail/run`);
    expect(failRun.body.data.run).toMatchObject({ status: 500, ok: false });
    expect(failRun.body.data.cron.lastFailure.trigger).toBe('manual');
    const missing = await t.api('POST', `/v1/spaces/${space.id}/crons/nope/run`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('cron_not_found');

    // A visitor can't pose as the scheduler: the header is removed before the handler sees it.
    await t.api('GET', '/api/visit', { token: null, host, headers: { 'x-service-cron': 'api-digest' } });
    expect((await calls()).find((c: { path: string }) => c.path === '/api/visit')).toMatchObject({
      cron: null,
    });

    // A version without crons goes live: nothing is scheduled; a rollback brings them back.
    const before = first.created.version.id as string;
    await publishViaVersions(t, space.id, { 'index.html': 'static only' });
    expect(await crons(space.id)).toEqual([]);
    clock.set(Date.parse('2026-03-10T12:00:30.000Z'));
    await runDue();
    const rolled = await t.api('POST', `/v1/spaces/${space.id}/versions/${before}/promote`);
    expect(rolled.status, rolled.text).toBe(200);
    const back = await crons(space.id);
    expect(back.map((c: { key: string }) => c.key)).toEqual(['api-digest', 'api-fail']);
    // What the key last did came back with it.
    expect(back[1].lastFailure.trigger).toBe('manual');
  });

  it('queues a due time once however many ticks run at once, and runs a private site’s crons', async () => {
    clock.set(Date.parse('2026-03-10T13:02:00.000Z'));
    const space = await createSpace(t, undefined, { slug: `cron-private-${db[0]}`, access: 'private' });
    await publishViaVersions(t, space.id, {
      'index.html': 'home',
      'tasks/rebuild.txt': 'done',
      'spaces.json': JSON.stringify({ crons: [{ path: '/tasks/rebuild.txt', schedule: '*/10 * * * *' }] }),
    });
    // A visitor gets nothing of the private site; the cron's request passes.
    const visit = await t.api('GET', '/tasks/rebuild.txt', { token: null, host: `${space.slug}.localhost` });
    expect(visit.status).not.toBe(200);
    clock.set(Date.parse('2026-03-10T13:10:05.000Z'));
    const due = await t.server.services.store.repos.spaceCrons.due(clock.now().toISOString(), 100);
    expect(due.map((c) => c.key)).toContain('tasks-rebuild-txt');
    const ticks = await Promise.all([1, 2, 3, 4].map(() => t.server.services.crons.tick()));
    expect(ticks.reduce((a, b) => a + b, 0)).toBe(due.length);
    await runDue();
    const [cron] = await crons(space.id);
    expect(cron).toMatchObject({
      key: 'tasks-rebuild-txt',
      lastRun: { status: 200, trigger: 'schedule' },
      lastFailure: null,
      nextRunAt: '2026-03-10T13:20:00.000Z',
    });
  });
});
