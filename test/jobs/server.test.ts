import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

it('reads SPACES_WORKER and SPACES_JOB_POLL_MS', () => {
  expect(loadConfig({})).toMatchObject({ worker: true, jobPollMs: 1000 });
  expect(loadConfig({ SPACES_WORKER: 'off', SPACES_JOB_POLL_MS: '250' })).toMatchObject({
    worker: false,
    jobPollMs: 250,
  });
  expect(() => loadConfig({ SPACES_WORKER: 'no' })).toThrow(ConfigError);
  expect(() => loadConfig({ SPACES_WORKER: 'no' })).toThrow(/SPACES_WORKER: expected one of on, off/);
  expect(() => loadConfig({ SPACES_JOB_POLL_MS: '5' })).toThrow(/SPACES_JOB_POLL_MS/);
  expect(() => loadConfig({ SPACES_JOB_POLL_MS: 'fast' })).toThrow(/SPACES_JOB_POLL_MS/);
});

describeEachDb('job worker in the server', (db) => {
  let t: TestServer | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  it('starts after the app is ready, runs enqueued jobs, and stops on close', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    t = await startServer({ db, clock, env: { SPACES_WORKER: 'on', SPACES_JOB_POLL_MS: '60000' } });
    const jobs = t.server.services.jobs;
    expect(jobs.isStarted).toBe(true);
    const ran = deferred<unknown>();
    const release = deferred();
    let finished = false;
    jobs.registerHandler('test.echo', async (job) => {
      ran.resolve(job.payload);
      await release.promise;
      finished = true;
    });
    // The poll interval is a minute: the job runs this soon only because enqueue wakes the worker.
    await jobs.enqueue('test.echo', { hello: 'world' });
    expect(await ran.promise).toEqual({ hello: 'world' });

    // Closing waits for the running handler, then stops the worker.
    const closing = t.close();
    setTimeout(() => release.resolve(), 50);
    await closing;
    t = null;
    expect(finished).toBe(true);
    expect(jobs.isStarted).toBe(false);
  });

  it('does not run jobs with SPACES_WORKER=off, but can still enqueue them', async () => {
    t = await startServer({ db, env: { SPACES_WORKER: 'off', SPACES_JOB_POLL_MS: '10' } });
    const jobs = t.server.services.jobs;
    expect(jobs.isStarted).toBe(false);
    let runs = 0;
    jobs.registerHandler('test.count', async () => {
      runs++;
    });
    const { id } = await jobs.enqueue('test.count', {});
    await new Promise((r) => setTimeout(r, 100));
    expect(runs).toBe(0);
    expect((await jobs.get(id))?.status).toBe('pending');
    expect((await jobs.stats()).kinds['test.count']).toEqual({ pending: 1 });
  });
});
