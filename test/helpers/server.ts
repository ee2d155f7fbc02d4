import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { request } from 'undici';
import { describe } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import type { EmitEvent } from '../../src/domain/webhooks/model.ts';
import { buildServer, type SpacesServer } from '../../src/server.ts';

export const PG_URL = process.env.SPACES_TEST_DATABASE_URL || '';

export type DbKind = 'sqlite' | 'postgres';

/** The databases storage and API suites run on: SQLite always, PostgreSQL when configured. */
export const DATABASES: DbKind[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** `describe` once per database. */
export function describeEachDb(name: string, fn: (db: DbKind) => void): void {
  for (const db of DATABASES) describe(`${name} [${db}]`, () => fn(db));
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Raw body (string or Buffer) sent as is, with the headers given. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  host?: string;
}

export interface TestServer {
  server: SpacesServer;
  url: string;
  port: number;
  /** The owner's API key (team_admin preset). */
  ownerKey: string;
  ownerEmail: string;
  dataDir: string;
  db: DbKind;
  /** The PostgreSQL schema holding this server's tables (undefined on SQLite). */
  schema: string | undefined;
  api<T = any>(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

export interface StartOptions {
  db?: DbKind;
  env?: Record<string, string>;
  /**
   * The server's clock. A test that sets the clock also runs the maintenance it needs itself
   * (`sweepBlobs`, `expireStale`, `purgeDeleted`, …): the server then starts no job worker unless
   * `env` turns it on (`SPACES_WORKER: 'on'`). A worker polls on real time but finds its hourly
   * jobs due by this clock, so each time the test moved the clock past a schedule it would run that
   * maintenance beside the test's own call, at a moment set by the machine's load (the two blob
   * sweeps then share the deletions, and neither count is the test's).
   */
  clock?: Clock;
  /**
   * Another instance of a running test server: the same database (its PostgreSQL schema) and data
   * directory. The first server owns them (its `close` drops them); close this one first.
   */
  instanceOf?: TestServer;
  /**
   * With `instanceOf`: this instance gets its own data directory (as on another machine) and shares
   * only the database and the blob store (`SPACES_BLOB_URL` of the peer's). Both must be given the
   * same `SPACES_SECRET_KEY` in `env`.
   */
  ownDataDir?: boolean;
  /** Where the webhooks area's own events (`webhook.*`) go (a recorder), until the event log is wired. */
  webhookEvents?: EmitEvent;
}

function newBootstrapToken(): string {
  return `sfa_${randomBytes(32).toString('hex')}`;
}

/** Starts the real server on port 0 with a fresh data dir (and a fresh PostgreSQL schema). */
export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  const peer = opts.instanceOf;
  const separate = Boolean(peer && opts.ownDataDir);
  const dataDir = peer && !separate ? peer.dataDir : fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-test-'));
  const ownerKey = peer?.ownerKey ?? newBootstrapToken();
  const kind = peer?.db ?? opts.db ?? 'sqlite';
  const schema = peer ? peer.schema : kind === 'postgres' ? `t_${randomBytes(6).toString('hex')}` : undefined;
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    SPACES_DATA_DIR: dataDir,
    SPACES_BOOTSTRAP_TOKEN: ownerKey,
    SPACES_LOG_LEVEL: 'silent',
    // Chromium per published space would load every suite: the thumbnail tests turn it on.
    SPACES_THUMBNAILS: 'off',
    ...(kind === 'postgres' ? { SPACES_DATABASE_URL: PG_URL } : {}),
    ...(opts.clock ? { SPACES_WORKER: 'off' } : {}),
    ...(peer && separate ? { SPACES_BLOB_URL: `file://${path.join(peer.dataDir, 'blobs')}` } : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const server = await buildServer(config, {
    clock: opts.clock,
    databaseSchema: schema,
    logger: pino({ level: process.env.SPACES_TEST_LOG ?? 'silent' }),
    webhookEvents: opts.webhookEvents,
  });
  const { port, url } = await server.listen();

  async function api<T = any>(method: string, p: string, o: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...o.headers };
    const token = o.token === undefined ? ownerKey : o.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (o.host) headers.host = o.host;
    let body: string | Buffer | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await request(`${url}${p}`, { method: method as 'GET', headers, body });
    const text = await res.body.text();
    let parsed: unknown = text;
    const ct = String(res.headers['content-type'] ?? '');
    if (ct.includes('json') && text) parsed = JSON.parse(text);
    return {
      status: res.statusCode,
      headers: res.headers as ApiResponse['headers'],
      body: parsed as T,
      text,
    };
  }

  return {
    server,
    url,
    port,
    db: kind,
    schema,
    ownerKey,
    ownerEmail: config.ownerEmail,
    dataDir,
    api,
    async close() {
      await server.close();
      if (separate) fs.rmSync(dataDir, { recursive: true, force: true });
      if (peer) return;
      if (schema) {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let userCounter = 0;

/** Creates a user through the owner-only endpoint and signs them in. Returns their session token. */
export async function createUser(
  t: TestServer,
  name = `user${++userCounter}`,
): Promise<{ token: string; userId: string; email: string; teamId: string }> {
  const email = `${name}-${randomBytes(3).toString('hex')}@example.test`;
  const password = 'correct horse battery';
  const created = await t.api('POST', '/v1/users', { body: { email, name, password } });
  if (created.status !== 201) throw new Error(`createUser: ${created.status} ${created.text}`);
  const session = await t.api('POST', '/v1/account/sessions', { token: null, body: { email, password } });
  if (session.status !== 201) throw new Error(`signIn: ${session.status} ${session.text}`);
  const me = await t.api('GET', '/v1/account', { token: session.body.data.token });
  return {
    token: session.body.data.token,
    userId: created.body.data.id,
    email,
    teamId: me.body.data.teams[0].id,
  };
}

/** Asserts the shape every problem document shares; returns it for further checks. */
export function expectProblem(res: ApiResponse, status: number, code: string): any {
  const b = res.body;
  const ok =
    res.status === status &&
    String(res.headers['content-type']).startsWith('application/problem+json') &&
    b?.code === code &&
    b?.status === status &&
    typeof b?.title === 'string' &&
    typeof b?.detail === 'string' &&
    typeof b?.requestId === 'string' &&
    typeof b?.type === 'string' &&
    b.type.endsWith(`/docs/errors/${code}`);
  if (!ok) throw new Error(`expected problem ${status} ${code}, got ${res.status} ${res.text}`);
  return b;
}
