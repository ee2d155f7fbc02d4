import type { CodeTable } from '../catalog.ts';

/** A runtime space's SQLite database (`env.DB` and its API; issue 26, behaviour §10). */
export const databaseCodes = {
  db_not_available: {
    status: 404,
    summary: 'The space has no database: none of its versions runs code (`runtime.kind: "functions"`).',
    suggestions: [
      'A database comes with functions: add `"runtime": {"kind": "functions"}` to spaces.json and a handler, then publish.',
    ],
  },
  db_table_not_found: {
    status: 404,
    summary: 'The database has no table of that name.',
    suggestions: ['`GET /v1/spaces/{spaceId}/db` lists the tables.'],
  },
  db_export_cursor_invalid: {
    status: 400,
    summary: 'The export cursor is not one an export page gave, or its table is gone since.',
    suggestions: ['Start the export again without a cursor.'],
  },
  db_import_invalid: {
    status: 422,
    summary:
      'The document is not a whole export this server reads (format `spaces.db-export`, version 1, every page merged).',
    suggestions: ['`spaces db export --out file.json` writes a whole export; import that file.'],
  },
  db_migration_changed: {
    status: 409,
    summary: 'A migration of this name was applied with other SQL: applied migrations never change.',
    suggestions: ['Undo the edit and add a new migration with the change.'],
  },
  db_migration_destructive: {
    status: 409,
    summary: 'The migration drops or renames a table or column: that needs `allowDrop` or `allowRename`.',
    suggestions: ['Export the database first (`spaces db export`), then migrate again with the allow flag.'],
  },
  db_migration_failed: {
    status: 422,
    summary: 'A migration failed in SQLite; no migration of the call was applied.',
  },
  db_query_failed: {
    status: 422,
    summary: 'SQLite refused the statement (syntax, constraint, unknown table or column, …).',
  },
  db_statement_refused: {
    status: 422,
    summary:
      'The statement is not allowed in a space database: ATTACH, DETACH, VACUUM, load_extension, transaction statements and PRAGMAs that change settings.',
    suggestions: ['Run several statements as one transaction with `batch` (or one migration).'],
  },
  db_bad_parameter: {
    status: 422,
    summary: 'A parameter cannot be bound: use null, numbers, strings, booleans or bytes.',
  },
  db_too_many_rows: {
    status: 422,
    summary: 'A statement may return at most 100,000 rows.',
    suggestions: ['Page with `LIMIT … OFFSET` or a keyset (`WHERE id > ?`).'],
  },
  db_batch_too_large: {
    status: 422,
    summary: 'A batch holds at most 1,000 statements.',
  },
  db_full: {
    status: 507,
    summary: 'The database reached its size limit (1 GiB).',
    suggestions: ['Delete rows you do not need, or move large values to env.STORAGE.'],
  },
  db_export_failed: {
    status: 422,
    summary: 'A table cannot be exported in key order (its columns hide every rowid alias).',
  },
  db_owner_unavailable: {
    status: 503,
    summary:
      'The instance that owns this space’s database did not answer; another takes over when its lease runs out (30 s).',
    suggestions: ['Try again in a few seconds.'],
  },
  db_console_invalid: {
    status: 401,
    summary: 'The console link was used already or has run out, or the console session ended.',
    suggestions: [
      'Ask for a new console URL: `GET /v1/spaces/{spaceId}/db/console` (or `spaces db console`).',
    ],
  },
} satisfies CodeTable;
