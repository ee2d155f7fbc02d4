import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { unwrap } from '../../sdk/index.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';

export const enc = encodeURIComponent;

/** Columns padded to the widest cell; the first row is the header when one is given. */
export function table(rows: string[][], header?: string[]): string {
  const all = header ? [header, ...rows] : rows;
  if (all.length === 0) return '';
  const widths = all[0]!.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
    .join('\n');
}

export async function readStdin(ctx: Context): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of ctx.io.stdin) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The space a command acts on (see Context.spaceRef), with its access level. */
export async function spaceWithAccess(ctx: Context, ref?: string) {
  return (
    await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId: ctx.spaceRef(ref) } } }),
    )
  ).data;
}

export async function space(ctx: Context, ref?: string) {
  return (await spaceWithAccess(ctx, ref)).space;
}

/**
 * Whether `openBrowser` can show a page here: macOS and Windows always can; elsewhere it needs a
 * display and `xdg-open` on the PATH (an SSH session or a container has neither).
 */
export function canOpenBrowser(env: NodeJS.ProcessEnv): boolean {
  if (process.platform === 'darwin' || process.platform === 'win32') return true;
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return false;
  return (env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => dir && fs.existsSync(path.join(dir, 'xdg-open')));
}

export function openBrowser(url: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open';
  const args = process.platform === 'win32' ? ['/c', 'start', '', url] : [url];
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no browser: the URL was printed
  }
}

/** Asks on a terminal; without one (or with --json) only --yes goes ahead. */
export async function confirm(ctx: Context, question: string): Promise<void> {
  if (ctx.opts.yes) return;
  if (!ctx.io.stdin.isTTY || ctx.json) {
    throw new UsageError(`${question} Pass --yes to confirm when not at a terminal.`);
  }
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr });
  const answer = await rl.question(`${question} [y/N] `);
  rl.close();
  if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('Cancelled.');
}

/** Reads an NDJSON response line by line (a followed log); returns when the server ends it. */
export async function readNdjson<T>(res: Response, onLine: (line: T) => void): Promise<void> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    for (let end = buf.indexOf('\n'); end >= 0; end = buf.indexOf('\n')) {
      const text = buf.slice(0, end).trim();
      buf = buf.slice(end + 1);
      if (text) onLine(JSON.parse(text) as T);
    }
  }
}

/** `--limit` of `spaces logs` (access or runtime): 1–100; by default 50, or the last 20 before following. */
export function logLimit(o: Record<string, unknown>): number {
  const limit = Number(o.limit ?? (o.follow ? 20 : 50));
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit takes 1 to 100.');
  return limit;
}
