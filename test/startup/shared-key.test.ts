import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, expect, it } from 'vitest';
import { loadConfig, StartupError } from '../../src/config.ts';
import { buildServer } from '../../src/server.ts';
import { describeEachDb, PG_URL } from '../helpers/server.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/spaces.mjs');
const dirs: string[] = [];
const schemas: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-key-'));
  dirs.push(d);
  return d;
};

afterAll(async () => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  if (!schemas.length) return;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  for (const s of schemas) await c.query(`drop schema if exists ${s} cascade`);
  await c.end();
});

describeEachDb('one secret key for every instance on a database', (kind) => {
  it('refuses an instance whose key differs from the one the database was started with', async () => {
    const shared = tmp();
    const schema = kind === 'postgres' ? `k_${randomBytes(5).toString('hex')}` : undefined;
    if (schema) schemas.push(schema);
    const databaseUrl = kind === 'postgres' ? PG_URL : `sqlite:${path.join(shared, 'spaces.db')}`;
    const start = (dataDir: string, extra: Record<string, string> = {}) =>
      buildServer(
        loadConfig({
          PORT: '0',
          HOST: '127.0.0.1',
          SPACES_DATA_DIR: dataDir,
          SPACES_DATABASE_URL: databaseUrl,
          SPACES_LOG_LEVEL: 'silent',
          ...extra,
        }),
        { databaseSchema: schema, logger: pino({ level: 'silent' }) },
      );

    // The first instance generates <dataDir>/secret.key; a restart with the same key is fine.
    const first = tmp();
    await (await start(first)).close();
    await (await start(first)).close();
    // A second instance with its own data directory would generate another key: refused.
    await expect(start(tmp())).rejects.toThrow(StartupError);
    await expect(start(tmp(), { SPACES_SECRET_KEY: 'x'.repeat(40) })).rejects.toThrow(
      /SPACES_SECRET_KEY to the same value on every one/,
    );
    // Copying the key over makes it the same instance as far as secrets go.
    const second = tmp();
    fs.copyFileSync(path.join(first, 'secret.key'), path.join(second, 'secret.key'));
    await (await start(second)).close();
  }, 60_000);
});

it('`spaces server` says why it refuses, in one line, and exits 1', () => {
  const shared = tmp();
  const env = { ...process.env, PORT: '0', HOST: '127.0.0.1', SPACES_LOG_LEVEL: 'silent' };
  const url = `sqlite:${path.join(shared, 'spaces.db')}`;
  const run = (key: string) =>
    spawnSync(process.execPath, [BIN, 'server'], {
      env: {
        ...env,
        SPACES_DATA_DIR: tmp(),
        SPACES_DATABASE_URL: url,
        SPACES_SECRET_KEY: key,
        SPACES_DRAIN_SECONDS: '0',
      },
      encoding: 'utf8',
      timeout: 60_000,
      killSignal: 'SIGTERM',
    });
  // The first start keeps running: stop it with a timeout-driven signal, it still recorded its key.
  const first = spawnSync(process.execPath, [BIN, 'server'], {
    env: {
      ...env,
      SPACES_DATA_DIR: tmp(),
      SPACES_DATABASE_URL: url,
      SPACES_SECRET_KEY: 'a'.repeat(40),
      SPACES_DRAIN_SECONDS: '0',
    },
    encoding: 'utf8',
    timeout: 15_000,
    killSignal: 'SIGTERM',
  });
  expect(first.stdout).toContain('Spaces listening on');
  const refused = run('b'.repeat(40));
  expect(refused.status).toBe(1);
  expect(refused.stderr).toMatch(/^spaces server: the secret key \(SPACES_SECRET_KEY\) is not the one/);
  expect(refused.stderr.trim().split('\n')).toHaveLength(1);
}, 120_000);
