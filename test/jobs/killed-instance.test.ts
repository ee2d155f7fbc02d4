import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { JobQueue } from '../../src/jobs/queue.ts';
import { type Database, openDatabase } from '../../src/store/db.ts';
import { PG_URL } from '../helpers/server.ts';
import { createEffectTables } from './fixtures/effect-handler.ts';

/**
 * Two real instances (processes of their own, `buildServer` + `listen` as `spaces server` runs them)
 * on one PostgreSQL database. Instance A leases a job and is killed with SIGKILL inside the job's
 * transaction; instance B, already running, leaves the job alone while A's lease lasts, then re-leases
 * it and completes it. The job's effect lands exactly once (A's transaction died uncommitted).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const LEASE_MS = 4000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Instance {
  child: ChildProcess;
  workerId: string;
  output: () => string;
}

describe.skipIf(!PG_URL)('a job held by a killed instance', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const token = `sfa_${randomBytes(32).toString('hex')}`;
  const secretKey = randomBytes(24).toString('hex');
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  let database: Database | undefined;

  async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `spaces-kill-${name}-`));
    dirs.push(dataDir);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'test/jobs/fixtures/instance.ts')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          PORT: '0',
          HOST: '127.0.0.1',
          SPACES_DATA_DIR: dataDir,
          SPACES_DATABASE_URL: PG_URL,
          SPACES_BOOTSTRAP_TOKEN: token,
          SPACES_SECRET_KEY: secretKey,
          SPACES_WORKER: 'on',
          SPACES_JOB_POLL_MS: '100',
          JOB_TEST_DB_SCHEMA: schema,
          JOB_TEST_LEASE_MS: String(LEASE_MS),
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
    });
    child.stderr!.on('data', (d) => {
      out = (out + d).slice(-8000);
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const line = out.split('\n').find((l) => l.startsWith('{"port"'));
      if (line) return { child, workerId: JSON.parse(line).workerId, output: () => out };
      if (child.exitCode !== null) throw new Error(`instance ${name} exited: ${out}`);
      if (Date.now() > deadline) throw new Error(`instance ${name} did not start: ${out}`);
      await sleep(50);
    }
  }

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await database?.close();
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('is re-leased after its lease runs out and completed by another instance, exactly once', async () => {
    const signalFile = path.join(os.tmpdir(), `spaces-kill-${schema}`);
    dirs.push(signalFile);
    // A creates the schema (migrations) and the owner; its handler hangs inside the transaction.
    const a = await startInstance('a', { JOB_TEST_HANG: '1', JOB_TEST_SIGNAL_FILE: signalFile });
    database = await openDatabase(PG_URL, { schema });
    const db = database.db as unknown as Kysely<any>;
    await createEffectTables(db);
    const { id } = await new JobQueue({ database, clock: systemClock }).enqueue('effect', {
      target: 'space_killed',
    });
    for (let i = 0; i < 200 && !fs.existsSync(signalFile); i++) {
      if (a.child.exitCode !== null) throw new Error(`A exited: ${a.output()}`);
      await sleep(25);
    }
    expect(fs.readFileSync(signalFile, 'utf8')).toBe(a.workerId);

    // B runs beside A before A dies: it must not take the job while A's lease lasts.
    const b = await startInstance('b', {});
    const exited = new Promise((resolve) => a.child.once('exit', (_code, signal) => resolve(signal)));
    a.child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const killedAt = Date.now();

    const row = () =>
      db
        .selectFrom('jobs')
        .select(['status', 'locked_by', 'attempts', 'locked_until'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    const held = await row();
    expect(held).toMatchObject({ status: 'running', locked_by: a.workerId, attempts: 1 });
    const leaseEnd = new Date(held.locked_until).getTime();

    let done = held;
    while (done.status !== 'succeeded') {
      if (Date.now() - killedAt > 15_000) throw new Error(`job not completed by B: ${JSON.stringify(done)}`);
      if (done.status === 'running' && done.locked_by === a.workerId) {
        // Still A's lease: nothing may have run the effect yet.
        expect(await db.selectFrom('job_test_effects').selectAll().execute()).toEqual([]);
      }
      await sleep(50);
      done = await row();
    }
    const completedAt = Date.now();
    expect(done).toMatchObject({ status: 'succeeded', locked_by: null, attempts: 2 });
    // Not before A's lease ran out.
    expect(completedAt).toBeGreaterThanOrEqual(leaseEnd);
    const deliveries = await db.selectFrom('job_test_deliveries').select(['worker', 'job_id']).execute();
    expect(deliveries).toEqual([
      { worker: a.workerId, job_id: id },
      { worker: b.workerId, job_id: id },
    ]);
    expect(await db.selectFrom('job_test_effects').selectAll().execute()).toEqual([
      { target: 'space_killed', job_id: id, worker: b.workerId },
    ]);
    // And not again: B keeps polling, the job stays done.
    await sleep(500);
    expect(await db.selectFrom('job_test_deliveries').selectAll().execute()).toHaveLength(2);
    expect(b.child.exitCode).toBeNull();
    console.log(
      `killed instance's job: re-leased and completed by B ${completedAt - killedAt} ms after the SIGKILL (lease ${LEASE_MS} ms)`,
    );
  }, 60_000);
});
