import { type Command, CommanderError } from 'commander';
import { SpacesProblem } from '../sdk/index.ts';
import { actions } from './commands.ts';
import { Context, EXIT, exitCodeOf, formatProblem, type GlobalOptions, type Io } from './context.ts';
import { UsageError } from './errors.ts';
import { type Action, buildProgram, CLI_VERSION } from './program.ts';

class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/**
 * Resolves once everything written to stdout and stderr so far has left the process. Writes to a pipe
 * are asynchronous in Node: exiting right after a large `--json` document would cut it off.
 */
function flushOutput(): Promise<void> {
  const drained = (s: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => {
      if (s.destroyed || !s.writable) return resolve();
      s.write('', () => resolve());
    });
  return Promise.all([drained(process.stdout), drained(process.stderr)]).then(() => {});
}

/**
 * The `spaces` bin's client side: runs the command, lets its output drain, and exits — a stray handle
 * (a keep-alive socket, a spinner) must not keep a finished command alive.
 */
export async function runCliAndExit(argv: string[]): Promise<never> {
  const code = await runCli(argv);
  await flushOutput();
  process.exit(code);
}

/** The `spaces` client: parses argv, runs the command, maps failures to documented exit codes. */
export async function runCli(argv: string[], io: Partial<Io> = {}): Promise<number> {
  const full: Io = {
    stdout: io.stdout ?? process.stdout,
    stderr: io.stderr ?? process.stderr,
    stdin: io.stdin ?? process.stdin,
    env: io.env ?? process.env,
    cwd: io.cwd ?? process.cwd(),
  };
  const wantsJson = argv.includes('--json');
  /** With --json --stream stdout is JSON Lines: a failure is one last `error` event. */
  const wantsStream = wantsJson && argv.includes('--stream');
  const printProblem = (problem: object) =>
    full.stdout.write(
      wantsStream
        ? `${JSON.stringify({ event: 'error', data: problem })}\n`
        : `${JSON.stringify(problem, null, 2)}\n`,
    );
  let ctx: Context | null = null;
  const run =
    (action: Action) =>
    async (...args: unknown[]): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      const opts = args[args.length - 2] as Record<string, unknown>;
      const positional = args.slice(0, -2) as string[];
      ctx = new Context(cmd.optsWithGlobals() as GlobalOptions, full);
      if (ctx.opts.stream && !ctx.opts.json) throw new UsageError('--stream needs --json.');
      await action(ctx, positional, opts);
    };
  const program = buildProgram(run, actions);
  const configure = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeOut: (s) => full.stdout.write(s),
      writeErr: (s) => full.stderr.write(s),
    });
    for (const sub of cmd.commands) configure(sub);
  };
  configure(program);
  const fail = (code: number, problem: { title: string; detail: string; code: string }) => {
    if (wantsJson) printProblem({ type: 'about:blank', status: 0, requestId: '', ...problem });
    return code;
  };
  let code: number = EXIT.ok;
  try {
    if (argv.length === 1 && (argv[0] === '-V' || argv[0] === '--version')) {
      full.stdout.write(`${CLI_VERSION}\n`);
      return EXIT.ok;
    }
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT.ok;
    }
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    (ctx as Context | null)?.stopProgress();
    if (err instanceof Exit) code = err.code;
    else if (err instanceof CommanderError) {
      if (err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version')
        code = EXIT.ok;
      else
        code = fail(EXIT.usage, {
          title: 'Usage error',
          detail: err.message.replace(/^error: /, ''),
          code: 'usage_error',
        });
    } else if (err instanceof UsageError) {
      full.stderr.write(`spaces: ${err.message}\n`);
      code = fail(EXIT.usage, { title: 'Usage error', detail: err.message, code: 'usage_error' });
    } else if (err instanceof SpacesProblem) {
      const c = ctx as Context | null;
      if (c?.json || wantsJson) printProblem(err.problem);
      else full.stderr.write(formatProblem(err.problem));
      code = exitCodeOf(err.problem);
    } else {
      full.stderr.write(`spaces: ${(err as Error)?.stack ?? String(err)}\n`);
      code = fail(EXIT.error, {
        title: 'Internal error',
        detail: String((err as Error)?.message ?? err),
        code: 'cli_error',
      });
    }
  }
  return code;
}
