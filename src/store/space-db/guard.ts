/**
 * What a handler's SQL may not do in its space's database (issue 26): reach another file (`ATTACH`,
 * `VACUUM INTO`, `load_extension`), hold a transaction across calls (`BEGIN`/`COMMIT`/`SAVEPOINT`:
 * `batch` is the transaction), or change the engine's settings (`PRAGMA` except the read-only ones
 * below). Checked on the SQL with string literals, quoted identifiers and comments removed, so a
 * keyword inside a value or a name never trips it and one outside always does.
 */
const REFUSED = /\b(ATTACH|DETACH|VACUUM|LOAD_EXTENSION|BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/i;
const PRAGMA = /\bPRAGMA\s+(?:[A-Za-z_][A-Za-z0-9_]*\s*\.\s*)?([A-Za-z_][A-Za-z0-9_]*)/gi;
const READ_PRAGMAS = new Set([
  'table_info',
  'table_xinfo',
  'table_list',
  'index_list',
  'index_info',
  'index_xinfo',
  'foreign_key_list',
  'foreign_key_check',
  'integrity_check',
  'quick_check',
  'page_count',
  'page_size',
  'user_version',
]);

/** The SQL with literals, quoted names and comments blanked out. */
export function sqlSkeleton(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    const next = sql[i + 1];
    if (ch === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end;
      out += ' ';
    } else if (ch === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
      out += ' ';
    } else if (ch === "'" || ch === '"' || ch === '`' || ch === '[') {
      const close = ch === '[' ? ']' : ch;
      let j = i + 1;
      for (;;) {
        const k = sql.indexOf(close, j);
        if (k < 0) {
          j = sql.length;
          break;
        }
        if (close !== ']' && sql[k + 1] === close) {
          j = k + 2;
          continue;
        }
        j = k + 1;
        break;
      }
      // A quoted thing stays a token (so `x'...'` and `"a"."b"` keep their shape) with no text inside.
      out += ch === "'" ? "''" : '""';
      i = j;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** Why this SQL is refused, or null when it may run. */
export function refusedSql(sql: string): string | null {
  const bare = sqlSkeleton(sql);
  const m = REFUSED.exec(bare);
  if (m) {
    const word = m[1]!.toUpperCase();
    if (['BEGIN', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT', 'RELEASE'].includes(word)) {
      // `END` also closes a CASE expression and a trigger body; `ROLLBACK` is a conflict clause (`OR ROLLBACK`).
      if (!transactionStatement(bare)) return checkPragmas(bare);
      return `${word} is not allowed: use batch() for a transaction`;
    }
    if (word === 'LOAD_EXTENSION') return 'load_extension is not allowed';
    return `${word} is not allowed: a handler reaches only its own space's database`;
  }
  return checkPragmas(bare);
}

/** Some statement of the text starts with a transaction keyword. */
function transactionStatement(bare: string): boolean {
  // A trigger's body ends with a bare `END`: with a trigger in the text, `END` is not `END TRANSACTION`.
  const trigger = /\bTRIGGER\b/i.test(bare);
  return bare
    .split(';')
    .some(
      (stmt) =>
        /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(stmt) ||
        (!trigger && /^\s*END\b/i.test(stmt)),
    );
}

function checkPragmas(bare: string): string | null {
  for (const m of bare.matchAll(PRAGMA)) {
    const name = m[1]!.toLowerCase();
    if (!READ_PRAGMAS.has(name)) return `PRAGMA ${name} is not allowed`;
    const after = bare.slice((m.index ?? 0) + m[0].length);
    if (/^\s*=/.test(after) && name !== 'user_version') return `PRAGMA ${name} may only be read`;
  }
  return null;
}
