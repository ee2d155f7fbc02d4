import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DB_OPS, type DbOp } from '../../domain/database/host.ts';
import { FORWARD_AUTH_HEADER, FORWARD_PATH, verifyForward } from '../../domain/database/owners.ts';
import { CONSOLE_PATH } from '../../domain/database/service.ts';
import { ApiError } from '../../errors/problem.ts';
import {
  DbConsoleResponse,
  DbConsoleResultResponse,
  DbConsoleSessionResponse,
  DbDumpResponse,
  DbExport,
  DbImportResponse,
  DbInspectionResponse,
  DbMigrateRequest,
  DbMigrateResponse,
} from '../../schemas/database.ts';
import { SpaceDbError } from '../../store/space-db/space-db.ts';
import { principalOf } from '../auth.ts';
import { send } from '../present.ts';
import { type AuthRequirement, addRoute } from '../route.ts';
import { consolePage } from './db-console-page.ts';
import { SpaceParams } from './spaces.ts';

/** Largest import document (a whole export). */
export const MAX_IMPORT_BYTES = 64 * 1024 * 1024;
const CONSOLE_HEADER = 'x-spaces-console';

const ExportQuery = Type.Object(
  { cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 8192 })) },
  { additionalProperties: false },
);

/** A runtime space's database (behaviour §10): inspect, dump, export/import, migrate, the console. */
export function databaseRoutes(app: FastifyInstance): void {
  const { databases } = app.services;
  const read: AuthRequirement = { accept: ['general', 'space_key'], scope: 'spaces:read' };
  const write: AuthRequirement = { accept: ['general', 'space_key'], scope: 'spaces:write' };
  const notAvailable =
    '404 `db_not_available` when none of the space’s versions runs code (`runtime.kind: "functions"`).';

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/db',
    operationId: 'inspectSpaceDatabase',
    summary: 'Inspect a space’s database',
    description: `The tables of the space’s SQLite database (what \`env.DB\` reaches) with their columns, indexes and row counts; its views and triggers; its size; and the migrations applied. ${notAvailable}`,
    tags: ['Database'],
    auth: read,
    params: SpaceParams,
    responses: { 200: DbInspectionResponse },
    handler: async (req, reply) =>
      send(reply, DbInspectionResponse, {
        data: await databases.inspect(principalOf(req), req.params.spaceId),
      }),
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/db/dump',
    operationId: 'dumpSpaceDatabase',
    summary: 'Dump the first rows of every table',
    description: `Every table’s first rows in key order (25 by default, at most 100), its row count, and whether there are more. ${notAvailable}`,
    tags: ['Database'],
    auth: read,
    params: SpaceParams,
    querystring: Type.Object(
      { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })) },
      { additionalProperties: false },
    ),
    responses: { 200: DbDumpResponse },
    handler: async (req, reply) =>
      send(reply, DbDumpResponse, {
        data: await databases.dump(principalOf(req), req.params.spaceId, req.query.limit ?? 25),
      }),
  });

  // One handler for the whole export and one table's (`/export/:table`).
  const exportHandler = async (
    req: FastifyRequest<{ Params: { spaceId: string; table?: string }; Querystring: { cursor?: string } }>,
    reply: FastifyReply,
  ) => {
    const table = req.params.table ?? null;
    const page = await databases.exportPage(principalOf(req), req.params.spaceId, {
      table,
      cursor: req.query.cursor ?? null,
    });
    if (page.next) {
      const base = `/v1/spaces/${req.params.spaceId}/db/export${table === null ? '' : `/${encodeURIComponent(table)}`}`;
      reply.header('link', `<${base}?cursor=${encodeURIComponent(page.next)}>; rel="next"`);
    }
    return send(reply, DbExport, page as never);
  };
  const exportDescription = `Keyset pages of at most 16 MiB, in key order (rowid, or the primary key of a WITHOUT ROWID table): the first page carries the schema, \`next\` (and a \`Link: rel="next"\`) the cursor of the following one. Versioned JSON (\`format: "spaces.db-export"\`, \`version: 1\`); bytes as \`{"$blob": base64}\`. Pages are read one at a time, not as one snapshot: export while nothing writes for an exact copy. Merge the pages (\`spaces db export --out\` does) to import them. 400 \`db_export_cursor_invalid\` for a cursor no page gave. ${notAvailable}`;

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/db/export',
    operationId: 'exportSpaceDatabase',
    summary: 'Export the whole database',
    description: exportDescription,
    tags: ['Database'],
    auth: read,
    params: SpaceParams,
    querystring: ExportQuery,
    responses: { 200: DbExport },
    handler: exportHandler,
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/db/export/:table',
    operationId: 'exportSpaceDatabaseTable',
    summary: 'Export one table',
    description: `As the whole export, for one table (its schema entries: the table, its indexes and triggers). 404 \`db_table_not_found\`. ${exportDescription}`,
    tags: ['Database'],
    auth: read,
    params: Type.Object({ spaceId: Type.String(), table: Type.String({ minLength: 1, maxLength: 512 }) }),
    querystring: ExportQuery,
    responses: { 200: DbExport },
    handler: exportHandler,
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/db/import',
    operationId: 'importSpaceDatabase',
    summary: 'Replace the database with an export',
    description: `Reads a whole export (every page merged, \`next: null\`; at most 64 MiB) and, in one transaction, drops what the database holds, makes the schema and inserts the rows — the migrations ledger included. Any failure leaves the database as it was: 422 \`db_import_invalid\`, \`db_query_failed\` or \`db_statement_refused\`. ${notAvailable}`,
    tags: ['Database'],
    auth: write,
    params: SpaceParams,
    body: DbExport,
    bodyLimit: MAX_IMPORT_BYTES,
    problems: [422],
    responses: { 200: DbImportResponse },
    handler: async (req, reply) =>
      send(reply, DbImportResponse, {
        data: await databases.importExport(principalOf(req), req.params.spaceId, req.body),
      }),
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/db/migrate',
    operationId: 'migrateSpaceDatabase',
    summary: 'Apply migrations',
    description: `Applies, in order and in one transaction, the migrations the ledger (\`_spaces_migrations\`) does not have; those it has with the same SQL are skipped. 409 \`db_migration_changed\` for an applied name whose SQL changed; 409 \`db_migration_destructive\` for a DROP or RENAME without \`allowDrop\` / \`allowRename\`; 422 \`db_migration_failed\` when SQLite refuses one (none is applied then). \`pointer\` names the migration. \`dryRun\` applies and rolls back. ${notAvailable}`,
    tags: ['Database'],
    auth: write,
    params: SpaceParams,
    body: DbMigrateRequest,
    problems: [409, 422],
    responses: { 200: DbMigrateResponse },
    handler: async (req, reply) =>
      send(reply, DbMigrateResponse, {
        data: await databases.migrate(principalOf(req), req.params.spaceId, req.body),
      }),
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/db/console',
    operationId: 'openSpaceDatabaseConsole',
    summary: 'Get a single-use console URL',
    description: `A URL that opens a SQL console with full authority over the database, once: it must be opened within 10 minutes, and the console’s session lasts an hour. The token rides in the URL’s fragment (never sent to a server log or in a Referer); the page trades it for a session it keeps in the tab. ${notAvailable}`,
    tags: ['Database'],
    auth: write,
    params: SpaceParams,
    responses: { 200: DbConsoleResponse },
    handler: async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return send(reply, DbConsoleResponse, {
        data: await databases.openConsole(principalOf(req), req.params.spaceId),
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: CONSOLE_PATH,
    operationId: 'databaseConsolePage',
    summary: 'The database console page',
    tags: ['Database'],
    auth: null,
    hidden: true,
    responses: { 200: 'HTML' },
    handler: async (_req, reply) => {
      const page = consolePage();
      return reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', page.csp)
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .header('x-frame-options', 'DENY')
        .send(page.html);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: `${CONSOLE_PATH}/session`,
    operationId: 'startDatabaseConsoleSession',
    summary: 'Trade a console token for a session',
    description:
      'What the console page does with the token of its URL: once per token, within 10 minutes of its making. 401 `db_console_invalid` for a token used already or run out.',
    tags: ['Database'],
    auth: null,
    body: Type.Object(
      { token: Type.String({ minLength: 1, maxLength: 256 }) },
      { additionalProperties: false },
    ),
    responses: { 200: DbConsoleSessionResponse },
    handler: async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return send(reply, DbConsoleSessionResponse, {
        data: await databases.exchangeConsoleToken(req.body.token),
      });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: `${CONSOLE_PATH}/query`,
    operationId: 'runDatabaseConsoleStatement',
    summary: 'Run one statement in a console session',
    description: `One statement with the console session (header \`${CONSOLE_HEADER}\`): a query’s columns and first 1,000 rows, or what a write changed. The statement rules of \`env.DB\` hold (no ATTACH, VACUUM, transaction statements or settings PRAGMAs). 401 \`db_console_invalid\` when the session ended.`,
    tags: ['Database'],
    auth: null,
    body: Type.Object(
      { sql: Type.String({ minLength: 1, maxLength: 1_048_576 }) },
      { additionalProperties: false },
    ),
    problems: [422],
    responses: { 200: DbConsoleResultResponse },
    handler: async (req, reply) => {
      const session = req.headers[CONSOLE_HEADER];
      if (typeof session !== 'string' || !session)
        throw new ApiError('db_console_invalid', `The console session goes in the ${CONSOLE_HEADER} header.`);
      return send(reply, DbConsoleResultResponse, {
        data: await databases.consoleQuery(session, req.body.sql),
      });
    },
  });

  // Several instances: another instance forwards a call on a space database this one owns.
  const key = app.services.spaceDbs.forwardKey;
  addRoute(app, {
    method: 'POST',
    url: `${FORWARD_PATH}/:spaceId/:op`,
    operationId: 'forwardSpaceDatabaseCall',
    summary: 'A call on a space database, forwarded by another instance',
    tags: ['Database'],
    auth: null,
    hidden: true,
    bodyLimit: MAX_IMPORT_BYTES + 1024 * 1024,
    params: Type.Object({ spaceId: Type.String({ maxLength: 64 }), op: Type.String({ maxLength: 32 }) }),
    responses: { 200: 'The call’s result' },
    handler: async (req, reply) => {
      const { spaceId, op } = req.params;
      const body = JSON.stringify(req.body ?? null);
      if (
        !key ||
        !verifyForward(
          key,
          req.headers[FORWARD_AUTH_HEADER] as string | undefined,
          spaceId,
          op,
          body,
          Date.now(),
        )
      )
        throw new ApiError('not_found', 'Not found.');
      if (!(DB_OPS as readonly string[]).includes(op)) throw new ApiError('not_found', 'Not found.');
      try {
        const result = await app.services.spaceDbs.call(spaceId, op as DbOp, req.body ?? null, {
          forwarded: true,
        });
        return reply.header('content-type', 'application/json').send(JSON.stringify({ result }));
      } catch (err) {
        if (!(err instanceof SpaceDbError)) throw err;
        return reply
          .code(200)
          .header('content-type', 'application/json')
          .send(JSON.stringify({ error: { code: err.code, message: err.message, pointer: err.pointer } }));
      }
    },
  });
}
