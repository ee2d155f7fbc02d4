import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { ErrorCode } from '../../errors/catalog.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import type { Store } from '../../store/repos/index.ts';
import type { SpaceRow } from '../../store/repos/spaces/spaces.ts';
import type {
  ConsoleResult,
  DbInspection,
  ExportPage,
  MigrateResult,
  Migration,
} from '../../store/space-db/admin.ts';
import { SpaceDbError } from '../../store/space-db/space-db.ts';
import type { Principal } from '../auth/principal.ts';
import type { SpaceService } from '../spaces/service.ts';
import type { DbOp, SpaceDbHost } from './host.ts';

/** How long a console URL may wait to be opened, and how long the console's session lasts. */
export const CONSOLE_OPEN_MS = 10 * 60_000;
export const CONSOLE_SESSION_MS = 60 * 60_000;
export const CONSOLE_PATH = '/v1/db-console';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** A database error as the API's problem (the code is the catalog's, the pointer the caller's input). */
export function dbProblem(err: unknown): unknown {
  if (!(err instanceof SpaceDbError)) return err;
  return new ApiError(err.code as ErrorCode, err.message, err.pointer ? { pointer: err.pointer } : {});
}

/**
 * The owner's API over a runtime space's database (issue 26, behaviour §10): inspect, dump, keyset
 * export, import of an export, migrations, and the single-use console. Every call goes through the
 * {@link SpaceDbHost}, so with several instances it reaches the instance that owns the file.
 */
export class DatabaseService {
  constructor(
    private readonly d: {
      store: Store;
      spaces: SpaceService;
      clock: Clock;
      host: SpaceDbHost;
      publicUrl: () => string;
    },
  ) {}

  /** The space, when it has a database: some version of it runs code (`db_not_available` otherwise). */
  async space(p: Principal, ref: string): Promise<SpaceRow> {
    const space = await this.d.spaces.resolve(p, ref);
    if (!(await this.d.store.repos.versionRuntimes.anyInSpace(space.id)))
      fail(
        'db_not_available',
        'This space has no database: none of its versions declares `runtime.kind: "functions"`.',
      );
    return space;
  }

  private async call<T>(spaceId: string, op: DbOp, args: unknown): Promise<T> {
    try {
      return (await this.d.host.call(spaceId, op, args)) as T;
    } catch (err) {
      throw dbProblem(err);
    }
  }

  async inspect(p: Principal, ref: string): Promise<DbInspection & { spaceId: string }> {
    const space = await this.space(p, ref);
    return { spaceId: space.id, ...(await this.call<DbInspection>(space.id, 'inspect', {})) };
  }

  async dump(p: Principal, ref: string, limit: number): Promise<unknown> {
    const space = await this.space(p, ref);
    return { spaceId: space.id, limit, ...(await this.call<object>(space.id, 'dump', { limit })) };
  }

  async exportPage(
    p: Principal,
    ref: string,
    opts: { table: string | null; cursor: string | null },
  ): Promise<ExportPage & { spaceId: string }> {
    const space = await this.space(p, ref);
    const page = await this.call<ExportPage>(space.id, 'export', opts);
    return { ...page, spaceId: space.id };
  }

  async importExport(
    p: Principal,
    ref: string,
    document: unknown,
  ): Promise<{ tables: number; rows: number }> {
    const space = await this.space(p, ref);
    return this.call(space.id, 'import', { document });
  }

  async migrate(
    p: Principal,
    ref: string,
    input: { migrations: Migration[]; dryRun?: boolean; allowDrop?: boolean; allowRename?: boolean },
  ): Promise<MigrateResult> {
    const space = await this.space(p, ref);
    const names = new Set<string>();
    input.migrations.forEach((m, i) => {
      if (names.has(m.name))
        fail('validation_error', `Two migrations are named ${m.name}.`, { pointer: `/migrations/${i}/name` });
      names.add(m.name);
    });
    return this.call(space.id, 'migrate', input);
  }

  /** A single-use console URL: the token rides in the fragment, so it never reaches a log or a Referer. */
  async openConsole(p: Principal, ref: string): Promise<{ url: string; expiresAt: string }> {
    const space = await this.space(p, ref);
    const token = randomBytes(32).toString('base64url');
    const now = this.d.clock.now();
    const expiresAt = new Date(now.getTime() + CONSOLE_OPEN_MS).toISOString();
    await this.d.store.repos.spaceDbConsoles.insert({
      id: newId('dbc'),
      space_id: space.id,
      created_by: p.userId ?? p.credentialId,
      token_hash: sha256(token),
      session_hash: null,
      created_at: now.toISOString(),
      open_until: expiresAt,
      session_until: null,
    });
    await this.d.store.repos.spaceDbConsoles.deleteEnded(now.toISOString());
    return { url: `${this.d.publicUrl()}${CONSOLE_PATH}#${token}`, expiresAt };
  }

  /** Turns a console token into a session secret, once; `db_console_invalid` for a used or stale one. */
  async exchangeConsoleToken(
    token: string,
  ): Promise<{ session: string; spaceId: string; expiresAt: string }> {
    const now = this.d.clock.now();
    const session = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + CONSOLE_SESSION_MS).toISOString();
    const ok = await this.d.store.repos.spaceDbConsoles.exchange(
      sha256(token),
      sha256(session),
      now.toISOString(),
      expiresAt,
    );
    if (!ok) fail('db_console_invalid', 'This console link was used already or has run out.');
    const row = await this.d.store.repos.spaceDbConsoles.bySession(sha256(session), now.toISOString());
    if (!row) fail('db_console_invalid', 'This console link was used already or has run out.');
    return { session, spaceId: row.space_id, expiresAt };
  }

  /** Runs one statement for a console session: the column names, the rows as arrays, and what changed. */
  async consoleQuery(session: string, sql: string): Promise<ConsoleResult & { spaceId: string }> {
    const row = await this.d.store.repos.spaceDbConsoles.bySession(
      sha256(session),
      this.d.clock.now().toISOString(),
    );
    if (!row) fail('db_console_invalid', 'The console session ended: ask for a new console URL.');
    const result = await this.call<ConsoleResult>(row.space_id, 'console', { sql });
    return { spaceId: row.space_id, ...result };
  }
}
