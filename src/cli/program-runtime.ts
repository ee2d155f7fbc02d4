import type { Command } from 'commander';

/**
 * The commands about a space's code as it runs: `logs` (access and runtime logs) and `db` (the
 * space's database). Part of program.ts's definitions, kept apart for its length.
 */
export function addRuntimeCommands(
  program: Command,
  a: (name: string) => (...args: unknown[]) => Promise<void>,
): void {
  program
    .command('logs')
    .argument('[space]', 'space id, slug or live URL (default: --space or the linked space)')
    .option('--access', 'access logs: the requests the edge answered (the default)')
    .option('--runtime', 'runtime logs: what the space’s functions wrote to the console and threw')
    .option('--follow', 'keep streaming new lines as they arrive (NDJSON with --json)')
    .option('--since <time>', 'lines at or after this ISO time or duration ago (30m, 2h, 7d)')
    .option('--until <time>', 'lines before this ISO time or duration ago')
    .option('--status <status>', 'an exact status (404) or a class (4xx)')
    .option('--path <prefix>', 'paths starting with this prefix (/blog/)')
    .option('--request-id <id>', 'the lines of one request id')
    .option('--level <level>', 'runtime logs of one level: log, info, debug, warn, error')
    .option(
      '--handler <handler>',
      'runtime logs of one handler: a route (/api/:id) or the entry (handler.ts)',
    )
    .option('--limit <n>', 'how many lines (1–100; default 50, with --follow the last 20 first)')
    .description('Access logs (--runtime: functions’ console) of a space, newest first')
    .action(a('logs'));
  const db = program
    .command('db')
    .description('The space’s database (env.DB): inspect, dump, export, import, migrate, console');
  const spaceArg = ['[space]', 'space id, slug or live URL (default: --space or the linked space)'] as const;
  db.command('inspect')
    .argument(...spaceArg)
    .description('Tables with their columns and row counts, size, and the migrations applied')
    .action(a('db.inspect'));
  db.command('dump')
    .argument(...spaceArg)
    .option('--limit <n>', 'rows per table (1–100, default 25)')
    .description('The first rows of every table')
    .action(a('db.dump'));
  db.command('export')
    .argument(...spaceArg)
    .option('--table <name>', 'one table only')
    .option(
      '--out <file>',
      'write to this file (replaced at once, never half-written); default: standard output',
    )
    .description('Export the whole database (every page) as one versioned JSON document')
    .action(a('db.export'));
  db.command('import')
    .argument('<file>', 'a whole export, as `spaces db export --out` writes it')
    .argument(...spaceArg)
    .description('Replace the database with an export, in one transaction')
    .action(a('db.import'));
  db.command('migrate')
    .argument('[dir]', 'folder of .sql files, applied in name order', 'migrations')
    .argument(...spaceArg)
    .option('--dry-run', 'apply and roll back: show what would be applied')
    .option('--allow-drop', 'allow DROP TABLE / VIEW / COLUMN')
    .option('--allow-rename', 'allow ALTER TABLE … RENAME')
    .description('Apply the migrations the database has not had yet (a ledger keeps the applied ones)')
    .action(a('db.migrate'));
  db.command('console')
    .argument(...spaceArg)
    .option('--no-browser', 'print the URL instead of opening it')
    .description('Open a single-use SQL console for the database in the browser')
    .action(a('db.console'));
}
