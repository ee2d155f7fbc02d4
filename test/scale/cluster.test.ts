import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, startLocalS3 } from '../helpers/s3.ts';
import { PG_URL } from '../helpers/server.ts';

/**
 * Three `spaces server` processes on one PostgreSQL database and one S3 bucket, behind HAProxy
 * started with the shipped deploy/haproxy.cfg: what docs/guides/scale-out.md describes is what runs.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/spaces.mjs');
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => fs.existsSync(p));
const PROMOTES = Number(process.env.SPACES_CLUSTER_PROMOTES ?? 100);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

interface Instance {
  name: string;
  port: number;
  child: ChildProcess;
  output: () => string;
  killed: boolean;
}

async function call(
  base: string,
  method: string,
  p: string,
  o: { token?: string | null; body?: unknown; host?: string } = {},
) {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.host) headers.host = o.host;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(`${base}${p}`, {
    method: method as 'GET',
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const text = await res.body.text();
  let body: any = text;
  if (String(res.headers['content-type'] ?? '').includes('json') && text) body = JSON.parse(text);
  return { status: res.statusCode, body, text };
}

describe.skipIf(!PG_URL || !HAPROXY)(
  'three instances behind HAProxy (deploy/haproxy.cfg), PostgreSQL + S3',
  () => {
    const token = `sfa_${randomBytes(32).toString('hex')}`;
    const dbName = `spaces_cluster_${randomBytes(4).toString('hex')}`;
    const dirs: string[] = [];
    const instances: Instance[] = [];
    let s3: LocalS3;
    let lb: ChildProcess | null = null;
    let lbUrl = '';
    let env: Record<string, string> = {};

    const admin = async (q: string) => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      try {
        await c.query(q);
      } finally {
        await c.end();
      }
    };

    async function startInstance(name: string): Promise<Instance> {
      const port = await freePort();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `spaces-${name}-`));
      dirs.push(dataDir);
      const child = spawn(process.execPath, [BIN, 'server'], {
        env: { ...process.env, ...env, PORT: String(port), SPACES_DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout!.on('data', (d) => {
        out = (out + d).slice(-8000);
      });
      child.stderr!.on('data', (d) => {
        out = (out + d).slice(-8000);
      });
      const inst: Instance = { name, port, child, output: () => out, killed: false };
      instances.push(inst);
      const deadline = Date.now() + 90_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`${name} exited: ${out}`);
        const r = await call(`http://127.0.0.1:${port}`, 'GET', '/readyz').catch(() => null);
        if (r?.status === 200) return inst;
        if (Date.now() > deadline) throw new Error(`${name} did not become ready: ${out}`);
        await sleep(100);
      }
    }

    const direct = (i: Instance) => `http://127.0.0.1:${i.port}`;

    beforeAll(async () => {
      await admin(`create database ${dbName}`);
      const url = new URL(PG_URL);
      url.pathname = `/${dbName}`;
      s3 = await startLocalS3('cluster');
      const lbPort = await freePort();
      lbUrl = `http://127.0.0.1:${lbPort}`;
      // deploy/instance.env's settings, pointed at this machine's services.
      env = {
        HOST: '127.0.0.1',
        SPACES_DATABASE_URL: url.toString(),
        SPACES_BLOB_URL: s3.blobUrl('blobs'),
        SPACES_INLINE_BLOB_BYTES: '0',
        SPACES_SECRET_KEY: randomBytes(24).toString('hex'),
        SPACES_PUBLIC_URL: lbUrl,
        SPACES_BASE_DOMAIN: 'localhost',
        SPACES_TRUSTED_PROXIES: '127.0.0.1',
        SPACES_DRAIN_SECONDS: '2',
        SPACES_BOOTSTRAP_TOKEN: token,
        SPACES_LOG_LEVEL: 'warn',
        SPACES_WORKER: 'on',
      };
      // The first creates the schema and the owner; the others start side by side.
      await startInstance('a');
      await Promise.all([startInstance('b'), startInstance('c')]);
      lb = spawn(HAPROXY!, ['-db', '-f', path.join(ROOT, 'deploy/haproxy.cfg')], {
        env: {
          ...process.env,
          SPACES_LB_BIND: `127.0.0.1:${lbPort}`,
          SPACES_INSTANCE_1: `127.0.0.1:${instances[0]!.port}`,
          SPACES_INSTANCE_2: `127.0.0.1:${instances[1]!.port}`,
          SPACES_INSTANCE_3: `127.0.0.1:${instances[2]!.port}`,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let lbErr = '';
      lb.stderr!.on('data', (d) => {
        lbErr += d;
      });
      const deadline = Date.now() + 30_000;
      while ((await call(lbUrl, 'GET', '/readyz').catch(() => null))?.status !== 200) {
        if (lb.exitCode !== null) throw new Error(`haproxy exited: ${lbErr}`);
        if (Date.now() > deadline) throw new Error(`haproxy not serving: ${lbErr}`);
        await sleep(100);
      }
    }, 240_000);

    afterAll(async () => {
      lb?.kill('SIGKILL');
      for (const i of instances) if (i.child.exitCode === null) i.child.kill('SIGKILL');
      await sleep(200);
      await s3?.close();
      await admin(`drop database if exists ${dbName} with (force)`).catch(() => {});
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    }, 60_000);

    const site = (n: number) => [{ path: 'index.html', content: `<h1>version ${n}</h1>` }];

    it(`serves a promote made through B on every instance within 1 s (${PROMOTES} promotes, p99)`, async () => {
      const [a, b] = instances as [Instance, Instance];
      // Publish through the balancer (whichever instance answers), then once more through A.
      const created = await call(lbUrl, 'POST', '/v1/spaces', {
        token,
        body: { slug: 'cluster-site', access: 'public' },
      });
      expect(created.status, created.text).toBe(201);
      const spaceId = created.body.data.space.id as string;
      const first = await call(lbUrl, 'POST', '/v1/publish', { token, body: { files: site(1), spaceId } });
      expect(first.status, first.text).toBe(201);
      const second = await call(direct(a), 'POST', '/v1/publish', {
        token,
        body: { files: site(2), spaceId },
      });
      expect(second.status, second.text).toBe(201);
      const versions = [first.body.data.version.id as string, second.body.data.version.id as string];
      const host = 'cluster-site.localhost';
      for (const i of instances) {
        const r = await call(direct(i), 'GET', '/', { host });
        expect(r.status, `${i.name}: ${r.text}`).toBe(200);
      }
      const delays: number[] = [];
      for (let k = 0; k < PROMOTES; k++) {
        const n = k % 2; // versions[0] is "version 1"
        const want = `<h1>version ${n + 1}</h1>`;
        const res = await call(direct(b), 'POST', `/v1/spaces/${spaceId}/versions/${versions[n]}/promote`, {
          token,
          body: {},
        });
        expect(res.status, res.text).toBe(200);
        const moved = Date.now();
        await Promise.all(
          instances.map(async (i) => {
            while (!(await call(direct(i), 'GET', '/', { host })).text.includes(want)) {
              if (Date.now() - moved > 5000)
                throw new Error(`${i.name} still serves the old version after 5 s`);
              await sleep(2);
            }
          }),
        );
        delays.push(Date.now() - moved);
      }
      delays.sort((x, y) => x - y);
      const p = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]!;
      console.log(
        `promote through B → served by all 3 instances: p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, max ${delays.at(-1)} ms (${PROMOTES} promotes)`,
      );
      expect(p(0.99)).toBeLessThan(1000);
    }, 300_000);

    it('loses no acknowledged version when an instance is killed (-9) mid-publishing; the balancer keeps serving', async () => {
      const victim = instances[2]!;
      const acknowledged: Array<{ spaceId: string; versionId: string; n: number }> = [];
      let failed = 0;
      const space = await call(lbUrl, 'POST', '/v1/spaces', {
        token,
        body: { slug: 'kill-site', access: 'public' },
      });
      expect(space.status, space.text).toBe(201);
      const spaceId = space.body.data.space.id as string;
      let leasedAtKill: string[] = [];
      for (let n = 1; n <= 30; n++) {
        if (n === 8) {
          // Jobs the victim holds at the moment it dies must be run by the others after their lease.
          const c = new pg.Client({ connectionString: env.SPACES_DATABASE_URL });
          await c.connect();
          const r = await c.query(`select id from jobs where status = 'running' and locked_by like $1`, [
            `%:${victim.child.pid}:%`,
          ]);
          await c.end();
          leasedAtKill = r.rows.map((x: { id: string }) => x.id);
          victim.killed = true;
          victim.child.kill('SIGKILL');
        }
        const res = await call(lbUrl, 'POST', '/v1/publish', {
          token,
          body: { files: site(100 + n), spaceId },
        }).catch(() => null);
        if (res && (res.status === 201 || res.status === 200)) {
          acknowledged.push({ spaceId, versionId: res.body.data.version.id, n: 100 + n });
        } else failed++;
      }
      console.log(
        `kill -9 during 30 publishes: ${acknowledged.length} acknowledged, ${failed} failed; the victim held ${leasedAtKill.length} job lease(s)`,
      );
      expect(acknowledged.length).toBeGreaterThanOrEqual(25);
      // Every acknowledged version is ready and whole, read through the balancer.
      for (const v of acknowledged) {
        const r = await call(lbUrl, 'GET', `/v1/spaces/${v.spaceId}/versions/${v.versionId}`, { token });
        expect(r.status, r.text).toBe(200);
        expect(r.body.data.status ?? r.body.data.version?.status).toBe('ready');
        const pinned = await call(lbUrl, 'GET', '/', {
          host: `${v.versionId.replace('_', '-')}--kill-site.localhost`,
        });
        expect(pinned.status, pinned.text).toBe(200);
        expect(pinned.text).toContain(`<h1>version ${v.n}</h1>`);
      }
      // The balancer keeps serving the live site with one instance gone.
      const last = acknowledged.at(-1)!;
      for (let k = 0; k < 30; k++) {
        const r = await call(lbUrl, 'GET', '/', { host: 'kill-site.localhost' });
        expect(r.status).toBe(200);
        expect(r.text).toContain(`<h1>version ${last.n}</h1>`);
      }
      if (leasedAtKill.length) {
        // Leases last 5 minutes by default; this only checks they are still claimable by the others.
        const c = new pg.Client({ connectionString: env.SPACES_DATABASE_URL });
        await c.connect();
        const r = await c.query(`select id, status, locked_until from jobs where id = any($1)`, [
          leasedAtKill,
        ]);
        await c.end();
        for (const row of r.rows) expect(['running', 'pending', 'succeeded']).toContain(row.status);
      }
    }, 300_000);

    it('an instance stopped with SIGTERM drains: the balancer takes it out before it closes, no request fails', async () => {
      const leaving = instances[1]!;
      let errors = 0;
      let served = 0;
      let stop = false;
      const load = (async () => {
        while (!stop) {
          const r = await call(lbUrl, 'GET', '/', { host: 'kill-site.localhost' }).catch(() => null);
          if (r?.status === 200) served++;
          else errors++;
        }
      })();
      await sleep(300);
      leaving.child.kill('SIGTERM');
      const exit = await new Promise<number | null>((resolve) =>
        leaving.child.once('exit', (code) => resolve(code)),
      );
      leaving.killed = true;
      await sleep(500);
      stop = true;
      await load;
      console.log(`SIGTERM during load: ${served} served, ${errors} failed; exit ${exit}`);
      expect(exit).toBe(0);
      expect(errors).toBe(0);
      expect(served).toBeGreaterThan(20);
    }, 120_000);

    it('the shipped HAProxy config is valid as written', () => {
      const r = spawnSync(HAPROXY!, ['-c', '-f', path.join(ROOT, 'deploy/haproxy.cfg')], {
        env: {
          ...process.env,
          SPACES_LB_BIND: '127.0.0.1:1',
          SPACES_INSTANCE_1: '127.0.0.1:2',
          SPACES_INSTANCE_2: '127.0.0.1:3',
          SPACES_INSTANCE_3: '127.0.0.1:4',
        },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
    });
  },
);
