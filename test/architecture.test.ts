/**
 * The layer rules of docs/architecture.md, checked over the source text (issue 19, "Done when"):
 * queries live in src/store/ only; domain/ and site/ never reach into http/ or serve/; site/ does no
 * I/O; store/ knows nothing above it; the CLI is a client. The allow-lists below name exactly what is
 * still being moved by #19: each entry must still be true (a test fails when an entry is no longer
 * needed), so the lists only shrink until the lead empties them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');
const MAX_LINES = 600;

/** Files that still hold Kysely queries outside src/store/, being moved into repositories by #19. */
const QUERIES_BEING_MOVED: readonly string[] = [];

/** Imports that break a layer rule today, each with why it is still there. */
const IMPORTS_BEING_MOVED: readonly { from: string; to: string; reason: string }[] = [];

/** Source files over 600 lines without a `Long file:` reason, being split by #19. */
const LONG_FILES_BEING_SPLIT: readonly string[] = [];

/** What counts as talking to the database: the query builders, raw SQL, transactions, the package. */
const QUERY_PATTERNS: readonly RegExp[] = [
  /\bselectFrom\(/,
  /\binsertInto\(/,
  /\bupdateTable\(/,
  /\bdeleteFrom\(/,
  /\bsql(<[^>]*>)?`/,
  /\.transaction\(\)/,
  /^\s*(import|export)\b[^;]*?\bfrom\s+['"]kysely['"]/m,
];

/** Modules that do I/O, which the pure site engine must not import. */
const IO_MODULES = [
  'node:fs',
  'node:fs/promises',
  'node:net',
  'node:http',
  'node:https',
  'node:http2',
  'node:tls',
  'node:dns',
  'node:child_process',
  'undici',
  'kysely',
  'pg',
  'better-sqlite3',
];

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

const rel = (abs: string) => path.relative(ROOT, abs).split(path.sep).join('/');

const files = walk(SRC)
  .map((abs) => ({ file: rel(abs), text: fs.readFileSync(abs, 'utf8') }))
  .sort((a, b) => a.file.localeCompare(b.file));

/**
 * A file's imports (static, re-exports, side-effect and dynamic), relative ones resolved to their
 * repository path (`src/http/errors.ts`), packages and `node:` modules as written.
 */
function importsOf(file: string, text: string): string[] {
  const specs: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/gm,
    /^\s*import\s*['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) specs.push(m[1]!);
  return specs.map((s) => (s.startsWith('.') ? rel(path.resolve(ROOT, path.dirname(file), s)) : s));
}

const under = (file: string, dir: string) => file.startsWith(`${dir}/`);
const hasQuery = (text: string) => QUERY_PATTERNS.some((re) => re.test(text));

interface Rule {
  name: string;
  applies: (file: string) => boolean;
  forbidden: (target: string) => boolean;
}

const RULES: Rule[] = [
  {
    name: 'src/domain/ imports nothing from src/http/ or src/serve/',
    applies: (f) => under(f, 'src/domain'),
    forbidden: (t) => under(t, 'src/http') || under(t, 'src/serve'),
  },
  {
    name: 'src/site/ imports nothing from src/http/ or src/serve/',
    applies: (f) => under(f, 'src/site'),
    forbidden: (t) => under(t, 'src/http') || under(t, 'src/serve'),
  },
  {
    name: 'src/site/ does no I/O (no fs, net, http, undici, database, store or blobs)',
    applies: (f) => under(f, 'src/site'),
    forbidden: (t) => IO_MODULES.includes(t) || under(t, 'src/store') || under(t, 'src/blobs'),
  },
  {
    name: 'src/store/ imports nothing from src/domain/, src/http/ or src/serve/',
    applies: (f) => under(f, 'src/store'),
    forbidden: (t) => under(t, 'src/domain') || under(t, 'src/http') || under(t, 'src/serve'),
  },
  {
    name: 'src/cli/ is a client: nothing from src/domain/, src/store/ or src/serve/',
    applies: (f) => under(f, 'src/cli'),
    forbidden: (t) => under(t, 'src/domain') || under(t, 'src/store') || under(t, 'src/serve'),
  },
];

function violations(): { from: string; to: string; rule: string }[] {
  const out: { from: string; to: string; rule: string }[] = [];
  for (const { file, text } of files) {
    const targets = [...new Set(importsOf(file, text))];
    for (const rule of RULES) {
      if (!rule.applies(file)) continue;
      for (const to of targets) if (rule.forbidden(to)) out.push({ from: file, to, rule: rule.name });
    }
  }
  return out;
}

function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** The file's first comment (a leading `//` run or `/* … *\/` block) names why it is long. */
function explainsLength(text: string): boolean {
  const head = text.trimStart();
  let comment = '';
  if (head.startsWith('/*')) comment = head.slice(0, head.indexOf('*/') + 2);
  else if (head.startsWith('//')) {
    const lines = head.split('\n');
    const run: string[] = [];
    for (const l of lines) {
      if (!l.trimStart().startsWith('//')) break;
      run.push(l);
    }
    comment = run.join('\n');
  }
  return /Long file:\s*\S/.test(comment);
}

describe('architecture: queries live in src/store/', () => {
  it('has no Kysely query, transaction or kysely import outside src/store/ (but the allow-list)', () => {
    const offenders = files
      .filter(({ file, text }) => !under(file, 'src/store') && hasQuery(text))
      .map(({ file }) => file)
      .filter((f) => !QUERIES_BEING_MOVED.includes(f));
    expect(offenders, 'move these queries into a repository under src/store/repos/').toEqual([]);
  });

  it('lists only files that still hold queries (remove an entry once its file is moved)', () => {
    const stale = QUERIES_BEING_MOVED.filter((f) => {
      const entry = files.find((x) => x.file === f);
      return !entry || !hasQuery(entry.text);
    });
    expect(stale, 'these files no longer hold queries: delete them from QUERIES_BEING_MOVED').toEqual([]);
  });

  it('recognises every form of query it looks for', () => {
    const samples = [
      "await db.selectFrom('spaces').selectAll().execute()",
      "db.insertInto('spaces')",
      "db.updateTable('spaces')",
      "db.deleteFrom('spaces')",
      'sql`select 1`',
      'sql<number>`select 1`',
      'await db.transaction().execute(fn)',
      "import type { Kysely } from 'kysely';",
      "import {\n  sql,\n  type Kysely,\n} from 'kysely';",
    ];
    for (const s of samples) expect(hasQuery(s), s).toBe(true);
    expect(hasQuery('await store.transaction(async (repos) => repos.spaces.byId(id))')).toBe(false);
  });
});

describe('architecture: imports follow the layers', () => {
  const found = violations();

  for (const rule of RULES) {
    it(rule.name, () => {
      const broken = found
        .filter((v) => v.rule === rule.name)
        .filter((v) => !IMPORTS_BEING_MOVED.some((a) => a.from === v.from && a.to === v.to))
        .map((v) => `${v.from} → ${v.to}`);
      expect(broken).toEqual([]);
    });
  }

  it('allows only imports that are still there (remove an entry once it is gone)', () => {
    const stale = IMPORTS_BEING_MOVED.filter((a) => !found.some((v) => v.from === a.from && v.to === a.to));
    expect(stale).toEqual([]);
  });

  it('reads every form of import', () => {
    const text = [
      "import { a } from '../http/errors.ts';",
      "import type {\n  B,\n  C,\n} from '../../serve/edge.ts';",
      "export { d } from './d.ts';",
      "export * from 'node:fs';",
      "import 'undici';",
      "const m = await import('node:net');",
    ].join('\n');
    expect(importsOf('src/domain/x/y.ts', text)).toEqual([
      'src/domain/http/errors.ts',
      'src/serve/edge.ts',
      'src/domain/x/d.ts',
      'node:fs',
      'undici',
      'node:net',
    ]);
  });
});

describe('architecture: source files stay readable', () => {
  it(`has no file over ${MAX_LINES} lines without "Long file: <reason>" in its first comment`, () => {
    const long = files
      .filter(({ text }) => lineCount(text) > MAX_LINES && !explainsLength(text))
      .map(({ file }) => file)
      .filter((f) => !LONG_FILES_BEING_SPLIT.includes(f));
    expect(long, 'split these files, or say why they are long at their top').toEqual([]);
  });

  it('lists only files that are still long (remove an entry once its file is split)', () => {
    const stale = LONG_FILES_BEING_SPLIT.filter((f) => {
      const entry = files.find((x) => x.file === f);
      return !entry || lineCount(entry.text) <= MAX_LINES || explainsLength(entry.text);
    });
    expect(stale).toEqual([]);
  });
});
