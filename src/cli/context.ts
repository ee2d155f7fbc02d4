import type { Ora } from 'ora';
import {
  createSpacesClient,
  createSpacesFetch,
  type Problem,
  type SpacesClient,
  type SpacesClientOptions,
  SpacesProblem,
} from '../sdk/index.ts';
import { ProfileCredential } from './credentials.ts';
import { UsageError } from './errors.ts';
import { ConfigStore, DEFAULT_API_URL, type Profile, type ProjectState, StateStore } from './store.ts';
import { CLI_USER_AGENT, networkSuggestions } from './transport.ts';

export interface GlobalOptions {
  apiUrl?: string;
  team?: string;
  space?: string;
  token?: string;
  json?: boolean;
  stream?: boolean;
  yes?: boolean;
  profile?: string;
}

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

let ora: typeof import('ora')['default'] | null = null;
let oraRequested = false;
/** ora (with its terminal-width tables) is loaded only where a spinner can be drawn. */
function loadOra(): void {
  if (oraRequested) return;
  oraRequested = true;
  void import('ora').then(
    (m) => {
      ora = m.default;
    },
    () => {},
  );
}

/**
 * Progress on a TTY: an ora spinner where the terminal reports its width, else one plain line per
 * step (ora needs the width to redraw its line; a pty without a size would be misdrawn). JSON Lines
 * events with --json --stream; silence otherwise.
 */
export class Progress {
  private spinner: Ora | null = null;
  private lastStep: string | null = null;
  constructor(private readonly ctx: Context) {
    if (!ctx.streaming && ctx.interactive && ctx.terminalWidth) loadOra();
  }

  event(name: string, fields: Record<string, unknown>, text?: string): void {
    if (this.ctx.streaming) this.ctx.writeJsonLine({ event: name, ...fields });
    else if (text && this.ctx.interactive && !this.paused) {
      if (!this.ctx.terminalWidth) {
        // Counters change many times a step: a plain line for each step, not for each count.
        if (name !== this.lastStep) this.ctx.io.stderr.write(`${text}\n`);
        this.lastStep = name;
        return;
      }
      // Until ora has loaded (a few ms after the command starts) there is no spinner to update.
      if (!this.spinner && ora)
        this.spinner = ora({ text, stream: this.ctx.io.stderr as NodeJS.WriteStream }).start();
      else if (this.spinner) this.spinner.text = text;
    }
  }
  succeed(text: string): void {
    if (this.spinner) this.spinner.succeed(text);
    else if (this.ctx.interactive && !this.ctx.streaming) this.ctx.io.stderr.write(`✔ ${text}\n`);
    this.spinner = null;
  }
  stop(): void {
    this.spinner?.stop();
    this.spinner = null;
  }
  private paused = false;
  /** Stops drawing while a question is asked on the same terminal. */
  pause(): void {
    this.stop();
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
}

/** Everything a command needs: resolved options, the API client, the stores, output helpers. */
export class Context {
  readonly configStore: ConfigStore;
  /** The link of the project directory: the working directory, or what `inProject` names. */
  readonly state: StateStore;
  constructor(
    readonly opts: GlobalOptions,
    readonly io: Io,
    projectDir: string = io.cwd,
  ) {
    this.configStore = new ConfigStore(io.env);
    this.state = new StateStore(projectDir);
  }

  /** The same command, linked through another directory's `.spaces/state.json` (what publish uses). */
  inProject(dir: string): Context {
    const c = new Context(this.opts, this.io, dir);
    c.progresses = this.progresses; // a failure stops its spinner too
    return c;
  }

  get json(): boolean {
    return Boolean(this.opts.json);
  }
  get streaming(): boolean {
    return Boolean(this.opts.json && this.opts.stream);
  }
  /** Progress output only for a person at a terminal. */
  get interactive(): boolean {
    return !this.json && Boolean(this.io.stderr.isTTY) && !this.io.env.CI;
  }
  /** The terminal's width, or 0 when it reports none (some ptys, serial consoles). */
  get terminalWidth(): number {
    return (this.io.stderr as NodeJS.WriteStream).columns ?? 0;
  }
  private progresses = new Set<Progress>();
  stopProgress(): void {
    for (const p of this.progresses) p.stop();
  }

  get profileName(): string {
    return (
      this.opts.profile || this.io.env.SPACES_PROFILE || this.configStore.read().currentProfile || 'default'
    );
  }
  get profile(): Profile | undefined {
    return this.configStore.read().profiles[this.profileName];
  }
  get apiUrl(): string {
    return (
      this.opts.apiUrl ||
      this.io.env.SPACES_API_URL ||
      this.profile?.apiUrl ||
      DEFAULT_API_URL
    ).replace(/\/+$/, '');
  }
  /** The person's credential: flag, environment, then profile (only when it is for this API URL). */
  get token(): string | undefined {
    if (this.opts.token) return this.opts.token;
    if (this.io.env.SPACES_TOKEN) return this.io.env.SPACES_TOKEN;
    const p = this.profile;
    if (p?.token && p.apiUrl.replace(/\/+$/, '') === this.apiUrl) return p.token;
    return undefined;
  }
  get team(): string | undefined {
    return this.opts.team || this.io.env.SPACES_TEAM || this.profile?.team;
  }

  /** The linked project's state when it belongs to this API URL. */
  get linked(): ProjectState | null {
    const s = this.state.read();
    return s && s.apiUrl === this.apiUrl ? s : null;
  }

  private _renewable: ProfileCredential | null | undefined;
  /** The profile's OAuth login when it is the credential in use and can be renewed (`spaces login`). */
  private get renewable(): ProfileCredential | undefined {
    if (this._renewable === undefined) {
      const p = this.profile;
      this._renewable =
        p?.token && p.tokenKind === 'oauth' && p.refreshToken && this.token === p.token
          ? new ProfileCredential(this.configStore, this.profileName, this.apiUrl, { ...p, token: p.token })
          : null;
    }
    return this._renewable ?? undefined;
  }

  /** The SDK's transport options for `token`: the CLI's user agent, retries, login renewal. */
  private transportFor(token: string | undefined): SpacesClientOptions {
    const credential = token && token === this.token ? this.renewable : undefined;
    return {
      baseUrl: this.apiUrl,
      userAgent: CLI_USER_AGENT,
      networkSuggestions,
      ...(token ? { token } : {}),
      ...(credential ? { credential } : {}),
    };
  }

  private _api: SpacesClient | null = null;
  /** The SDK's typed client with the person's credential (or the linked anonymous space's key). */
  get api(): SpacesClient {
    if (!this._api) this._api = this.apiWith(this.apiToken);
    return this._api;
  }
  /** `api`'s credential: the person's, else (without one) a linked anonymous space's key. */
  get apiToken(): string | undefined {
    return this.token ?? this.linked?.spaceKey;
  }

  /**
   * For commands on the linked space: an anonymous space is reachable only with its own key (a
   * person's credential can't see it until it is claimed), so that key wins while it is kept.
   */
  get spaceApi(): SpacesClient {
    const key = this.linkedSpaceKey;
    return key ? this.apiWith(key) : this.api;
  }
  /** `spaceApi`'s credential. */
  get spaceToken(): string | undefined {
    return this.linkedSpaceKey ?? this.apiToken;
  }
  private get linkedSpaceKey(): string | undefined {
    const linked = this.linked;
    const explicit = this.opts.space || this.io.env.SPACES_SPACE;
    if (
      linked?.spaceKey &&
      (!explicit ||
        normaliseSpaceRef(explicit) === linked.spaceId ||
        normaliseSpaceRef(explicit) === linked.slug)
    ) {
      return linked.spaceKey;
    }
    return undefined;
  }

  /** The typed client with another credential (none: an anonymous call). */
  apiWith(token: string | undefined): SpacesClient {
    return createSpacesClient(this.transportFor(token));
  }
  /** The SDK's transport on its own, for URLs outside the typed paths (signed uploads, `spaces api`). */
  fetchWith(token: string | undefined): typeof fetch {
    return createSpacesFetch(this.transportFor(token));
  }

  requireToken(): string {
    const t = this.token;
    if (!t) {
      throw new SpacesProblem({
        type: 'about:blank',
        title: 'Not logged in',
        status: 401,
        code: 'unauthorized',
        detail: `No credential for ${this.apiUrl}.`,
        requestId: '',
        suggestions: ['Run `spaces login` (or `spaces login --token <key>`), or set SPACES_TOKEN.'],
      });
    }
    return t;
  }

  /** The space ref the command acts on: --space / SPACES_SPACE (id, slug or live URL), else the link. */
  spaceRef(explicit?: string): string {
    const raw = explicit || this.opts.space || this.io.env.SPACES_SPACE;
    if (raw) return normaliseSpaceRef(raw);
    const linked = this.linked;
    if (linked) return linked.spaceId;
    throw new UsageError(
      'No space given: pass --space <id|slug|url>, set SPACES_SPACE, or run `spaces link`.',
    );
  }

  out(text: string): void {
    if (!this.json) this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }
  err(text: string): void {
    this.io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }
  writeJsonLine(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value)}\n`);
  }
  /** The command's result: JSON on stdout with --json (a `result` event when streaming), else text. */
  result(value: unknown, human: () => string | undefined): void {
    if (this.streaming) this.writeJsonLine({ event: 'result', data: value });
    else if (this.json) this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    else {
      const text = human();
      if (text) this.out(text);
    }
  }
  progress(): Progress {
    const p = new Progress(this);
    this.progresses.add(p);
    return p;
  }
}

/** A live URL (`https://slug.example.com/...`) names the space by its first host label. */
export function normaliseSpaceRef(raw: string): string {
  if (/^https?:\/\//i.test(raw)) {
    try {
      return new URL(raw).hostname.split('.')[0] ?? raw;
    } catch {
      return raw;
    }
  }
  return raw;
}

export function formatProblem(p: Problem): string {
  const lines = [`Error: ${p.title}${p.status ? ` (${p.status})` : ''}`];
  if (p.detail) lines.push(`  ${p.detail}`);
  if (p.pointer) lines.push(`  at: ${p.pointer}`);
  lines.push(`  code: ${p.code}`);
  const diagnostics = (p.details as { diagnostics?: unknown } | undefined)?.diagnostics;
  if (Array.isArray(diagnostics)) {
    for (const d of diagnostics.slice(0, 50) as Array<Record<string, unknown>>) {
      const where = d.path ? ` ${String(d.path)}:` : '';
      lines.push(
        `  ${String(d.severity ?? 'error')}:${where} ${String(d.message ?? '')} (${String(d.code ?? '')})`,
      );
      if (d.fix) lines.push(`    fix: ${String(d.fix)}`);
    }
  }
  const paths = (p.details as { paths?: unknown } | undefined)?.paths;
  if (Array.isArray(paths)) {
    for (const x of paths.slice(0, 20)) lines.push(`  - ${String(x)}`);
    if (paths.length > 20) lines.push(`  … and ${paths.length - 20} more`);
  }
  if (p.requestId) lines.push(`  request id: ${p.requestId}`);
  for (const s of p.suggestions ?? []) lines.push(`  hint: ${s}`);
  for (const n of p.next ?? []) lines.push(`  next: ${n}`);
  return `${lines.join('\n')}\n`;
}

/** Documented exit codes (docs/cli/reference.md). */
export const EXIT = { ok: 0, error: 1, usage: 2, auth: 3, notFound: 4, conflict: 5, limit: 6 } as const;

export function exitCodeOf(p: Problem): number {
  const s = p.status;
  if (s === 401 || s === 403) return EXIT.auth;
  if (s === 404 || s === 410) return EXIT.notFound;
  if (s === 409 || s === 412) return EXIT.conflict;
  if (s === 429 || s === 413 || s === 402) return EXIT.limit;
  if (/(_limit_|_exceeded$|_too_large$|_quota_|rate_limited)/.test(p.code)) return EXIT.limit;
  return EXIT.error;
}
