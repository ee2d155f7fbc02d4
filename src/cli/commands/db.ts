import fs from 'node:fs';
import path from 'node:path';
import { unwrap } from '../../sdk/index.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import type { Action } from '../program.ts';
import { openBrowser, table } from './shared.ts';

type ExportDoc = {
  format: 'spaces.db-export';
  version: 1;
  exportedAt: string;
  schema?: unknown[];
  tables: { name: string; columns: string[]; rows: unknown[][] }[];
  next: string | null;
};

const cell = (v: unknown): string => {
  if (v === null || v === undefined) return 'NULL';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return s.length > 40 ? `${s.slice(0, 39)}…` : s;
};

/** Writes a file atomically: a temporary file beside it, then a rename over it. */
function writeAtomically(file: string, text: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(tmp, text, { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/** Every page of the export merged into one document (`next: null`), which `import` reads. */
async function exportAll(ctx: Context, spaceId: string, tableName: string | null): Promise<ExportDoc> {
  let merged: ExportDoc | null = null;
  let cursor: string | undefined;
  do {
    const query = cursor ? { cursor } : {};
    const page = (await unwrap(
      tableName === null
        ? ctx.spaceApi.GET('/v1/spaces/{spaceId}/db/export', { params: { path: { spaceId }, query } })
        : ctx.spaceApi.GET('/v1/spaces/{spaceId}/db/export/{table}', {
            params: { path: { spaceId, table: tableName }, query },
          }),
    )) as unknown as ExportDoc & { $schema?: string };
    const { $schema: _, ...body } = page;
    if (!merged) merged = { ...body, tables: [] };
    for (const t of body.tables) {
      const had = merged.tables.find((x) => x.name === t.name);
      if (had) had.rows.push(...t.rows);
      else merged.tables.push({ ...t, rows: [...t.rows] });
    }
    cursor = body.next ?? undefined;
  } while (cursor);
  merged.next = null;
  return merged;
}

/** `spaces db …`: a runtime space's database (behaviour §10). */
export const dbActions: Record<string, Action> = {
  async 'db.inspect'(ctx, [ref]) {
    const spaceId = ctx.spaceRef(ref);
    const { data } = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/db', { params: { path: { spaceId } } }),
    );
    ctx.result(data, () => {
      const lines = [`${data.tables.length} table(s), ${data.sizeBytes} bytes`];
      if (data.tables.length)
        lines.push(
          table(
            data.tables.map((t) => [t.name, String(t.rowCount), t.columns.map((c) => c.name).join(', ')]),
            ['TABLE', 'ROWS', 'COLUMNS'],
          ),
        );
      if (data.migrations.length)
        lines.push('', `Migrations applied: ${data.migrations.map((m) => m.name).join(', ')}`);
      return lines.join('\n');
    });
  },

  async 'db.dump'(ctx, [ref], o) {
    const spaceId = ctx.spaceRef(ref);
    const limit = o.limit === undefined ? 25 : Number(o.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit takes 1 to 100.');
    const { data } = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/db/dump', { params: { path: { spaceId }, query: { limit } } }),
    );
    ctx.result(
      data,
      () =>
        data.tables
          .map((t) => {
            const cols = t.rows[0] ? Object.keys(t.rows[0]) : [];
            const head = `${t.name} (${t.rowCount} row(s)${t.truncated ? `, first ${t.rows.length} shown` : ''})`;
            return t.rows.length
              ? `${head}\n${table(
                  t.rows.map((r) => cols.map((c) => cell(r[c]))),
                  cols,
                )}`
              : head;
          })
          .join('\n\n') || 'The database has no tables yet.',
    );
  },

  async 'db.export'(ctx, [ref], o) {
    const spaceId = ctx.spaceRef(ref);
    const doc = await exportAll(ctx, spaceId, o.table === undefined ? null : String(o.table));
    const text = `${JSON.stringify(doc)}\n`;
    if (o.out === undefined) {
      ctx.io.stdout.write(text);
      return;
    }
    const file = path.resolve(ctx.io.cwd, String(o.out));
    writeAtomically(file, text);
    const rows = doc.tables.reduce((n, t) => n + t.rows.length, 0);
    ctx.result(
      { file, tables: doc.tables.length, rows },
      () => `Wrote ${doc.tables.length} table(s), ${rows} row(s) to ${file}`,
    );
  },

  async 'db.import'(ctx, [file, ref]) {
    const spaceId = ctx.spaceRef(ref);
    let doc: unknown;
    try {
      doc = JSON.parse(fs.readFileSync(path.resolve(ctx.io.cwd, file!), 'utf8'));
    } catch (err) {
      throw new UsageError(`${file}: not a readable JSON export (${(err as Error).message})`);
    }
    const { data } = await unwrap(
      ctx.spaceApi.POST('/v1/spaces/{spaceId}/db/import', {
        params: { path: { spaceId } },
        body: doc as never,
      }),
    );
    ctx.result(data, () => `Replaced the database: ${data.tables} table(s), ${data.rows} row(s)`);
  },

  async 'db.migrate'(ctx, [dir, ref], o) {
    const spaceId = ctx.spaceRef(ref);
    const folder = path.resolve(ctx.io.cwd, dir ?? 'migrations');
    let names: string[];
    try {
      names = fs.readdirSync(folder).filter((n) => n.endsWith('.sql'));
    } catch {
      throw new UsageError(`${folder}: no such folder (migrations are .sql files, applied in name order).`);
    }
    if (!names.length) throw new UsageError(`${folder} has no .sql files.`);
    names.sort();
    const migrations = names.map((name) => ({ name, sql: fs.readFileSync(path.join(folder, name), 'utf8') }));
    const { data } = await unwrap(
      ctx.spaceApi.POST('/v1/spaces/{spaceId}/db/migrate', {
        params: { path: { spaceId } },
        body: {
          migrations,
          ...(o.dryRun ? { dryRun: true } : {}),
          ...(o.allowDrop ? { allowDrop: true } : {}),
          ...(o.allowRename ? { allowRename: true } : {}),
        },
      }),
    );
    ctx.result(data, () => {
      const verb = data.dryRun ? 'Would apply' : 'Applied';
      return data.applied.length
        ? `${verb} ${data.applied.map((m) => m.name).join(', ')}${data.skipped.length ? ` (${data.skipped.length} already applied)` : ''}`
        : `Nothing to apply: all ${data.skipped.length} migration(s) are applied.`;
    });
  },

  async 'db.console'(ctx, [ref], o) {
    const spaceId = ctx.spaceRef(ref);
    const { data } = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/db/console', { params: { path: { spaceId } } }),
    );
    ctx.result(data, () => `${data.url}\n(opens once, until ${data.expiresAt})`);
    if (!ctx.json && o.browser !== false && ctx.io.stdout.isTTY) openBrowser(data.url);
  },
};
