import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable, SchemaRef } from './common.ts';
import { defineSchema } from './registry.ts';

const Value = Type.Unknown({
  description:
    'A SQLite value: null, a number, a string, or a tagged value — `{"$blob": base64}` for bytes, `{"$int": "…"}` for an integer beyond ±2^53, `{"$real": "Infinity"}`',
});

const Column = Type.Object(
  {
    name: Type.String(),
    type: Type.String({ description: 'The declared type (`TEXT`, `INTEGER`, … or empty)' }),
    notNull: Type.Boolean(),
    primaryKey: Type.Integer({ description: '1-based position in the primary key; 0 when not part of it' }),
    default: Nullable(Type.String({ description: 'The default as SQL text' })),
  },
  { additionalProperties: false },
);

const Index = Type.Object(
  {
    name: Type.String(),
    unique: Type.Boolean(),
    columns: Type.Array(Type.String()),
    origin: Type.String({ description: '`c` CREATE INDEX, `u` UNIQUE constraint, `pk` primary key' }),
  },
  { additionalProperties: false },
);

export const DbTable = defineSchema(
  'DbTable',
  Type.Object(
    {
      name: Type.String(),
      rowCount: Type.Integer({ minimum: 0 }),
      withoutRowid: Type.Boolean(),
      columns: Type.Array(Column),
      indexes: Type.Array(Index),
      sql: Type.String({ description: 'The CREATE TABLE statement' }),
    },
    { additionalProperties: false },
  ),
);

export const DbInspection = defineSchema(
  'DbInspection',
  Type.Object(
    {
      spaceId: Type.String(),
      sizeBytes: Type.Integer({ minimum: 0 }),
      tables: Type.Array(DbTable, {
        description: 'The tables, by name (the migrations ledger is listed apart)',
      }),
      views: Type.Array(
        Type.Object({ name: Type.String(), sql: Type.String() }, { additionalProperties: false }),
      ),
      triggers: Type.Array(
        Type.Object(
          { name: Type.String(), table: Type.String(), sql: Type.String() },
          { additionalProperties: false },
        ),
      ),
      migrations: Type.Array(
        Type.Object(
          { name: Type.String(), sha256: Type.String(), appliedAt: DateTime },
          { additionalProperties: false },
        ),
        { description: 'Migrations applied through `POST …/db/migrate`, in the order they were applied' },
      ),
    },
    { additionalProperties: false },
  ),
);
export const DbInspectionResponse = defineSchema('DbInspectionResponse', DataEnvelope(DbInspection));

export const DbDumpResponse = defineSchema(
  'DbDumpResponse',
  DataEnvelope(
    Type.Object(
      {
        spaceId: Type.String(),
        limit: Type.Integer({ minimum: 1, maximum: 100 }),
        tables: Type.Array(
          Type.Object(
            {
              name: Type.String(),
              rowCount: Type.Integer({ minimum: 0 }),
              truncated: Type.Boolean({ description: 'The table has more rows than the dump shows' }),
              rows: Type.Array(Type.Record(Type.String(), Value), {
                description: 'The first rows in key order',
              }),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  ),
);

const SchemaEntry = Type.Object(
  {
    type: Type.Union([
      Type.Literal('table'),
      Type.Literal('index'),
      Type.Literal('view'),
      Type.Literal('trigger'),
    ]),
    name: Type.String(),
    table: Type.String(),
    sql: Type.String(),
  },
  { additionalProperties: false },
);

const ExportTable = Type.Object(
  {
    name: Type.String(),
    columns: Type.Array(Type.String()),
    rows: Type.Array(Type.Array(Value), { description: 'Rows as arrays in `columns` order, in key order' }),
  },
  { additionalProperties: false },
);

/** A page of an export, and (every page merged, `next: null`) what an import reads. */
export const DbExport = defineSchema(
  'DbExport',
  Type.Object(
    {
      $schema: SchemaRef,
      format: Type.Literal('spaces.db-export'),
      version: Type.Literal(1),
      spaceId: Type.Optional(Type.String()),
      exportedAt: DateTime,
      schema: Type.Optional(
        Type.Array(SchemaEntry, {
          description:
            'On the first page only: the statements that make the tables, indexes, views and triggers',
        }),
      ),
      tables: Type.Array(ExportTable, { maxItems: 10_000 }),
      next: Nullable(
        Type.String({
          description: 'Cursor of the next page (`?cursor=`); null on the last page',
          maxLength: 8192,
        }),
      ),
    },
    { additionalProperties: false },
  ),
);

export const DbImportResponse = defineSchema(
  'DbImportResponse',
  DataEnvelope(
    Type.Object(
      { tables: Type.Integer({ minimum: 0 }), rows: Type.Integer({ minimum: 0 }) },
      { additionalProperties: false },
    ),
  ),
);

export const DbMigrateRequest = defineSchema(
  'DbMigrateRequest',
  Type.Object(
    {
      migrations: Type.Array(
        Type.Object(
          {
            name: Type.String({
              minLength: 1,
              maxLength: 200,
              pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
              description:
                'Stable name (such as 0001_notes.sql): the ledger skips names it has and refuses one whose SQL changed',
            }),
            sql: Type.String({ minLength: 1, maxLength: 1_048_576 }),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 500 },
      ),
      dryRun: Type.Optional(Type.Boolean({ description: 'Apply and roll back: say what would be applied' })),
      allowDrop: Type.Optional(Type.Boolean({ description: 'Allow DROP TABLE / VIEW / COLUMN' })),
      allowRename: Type.Optional(Type.Boolean({ description: 'Allow ALTER TABLE … RENAME' })),
    },
    { additionalProperties: false },
  ),
);

export const DbMigrateResponse = defineSchema(
  'DbMigrateResponse',
  DataEnvelope(
    Type.Object(
      {
        applied: Type.Array(
          Type.Object({ name: Type.String(), sha256: Type.String() }, { additionalProperties: false }),
        ),
        skipped: Type.Array(Type.String(), {
          description: 'Names the ledger had already, with the same SQL',
        }),
        dryRun: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
  ),
);

export const DbConsoleResponse = defineSchema(
  'DbConsoleResponse',
  DataEnvelope(
    Type.Object(
      {
        url: Type.String({
          format: 'uri',
          description:
            'Opens the console once; the token is in the fragment, so it reaches no log or Referer',
        }),
        expiresAt: DateTime,
      },
      { additionalProperties: false },
    ),
  ),
);

export const DbConsoleSessionResponse = defineSchema(
  'DbConsoleSessionResponse',
  DataEnvelope(
    Type.Object(
      { session: Type.String(), spaceId: Type.String(), expiresAt: DateTime },
      { additionalProperties: false },
    ),
  ),
);

export const DbConsoleResultResponse = defineSchema(
  'DbConsoleResultResponse',
  DataEnvelope(
    Type.Object(
      {
        spaceId: Type.String(),
        columns: Type.Array(Type.String()),
        rows: Type.Array(Type.Array(Value)),
        truncated: Type.Boolean({ description: 'More than 1,000 rows: the rest is not shown' }),
        changes: Type.Integer({ minimum: 0 }),
        lastRowId: Type.Integer(),
        duration: Type.Number({ description: 'Milliseconds' }),
      },
      { additionalProperties: false },
    ),
  ),
);
