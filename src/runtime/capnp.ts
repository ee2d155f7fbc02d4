import { STORAGE_MODULE_NAME } from './storage-binding.ts';

/**
 * The workerd configuration of one worker process (capnp text; workerd embeds its schema). The
 * worker listens on a Unix socket only the server uses; it has no disk service (no filesystem), and
 * its `globalOutbound` is either a network service that allows nothing (no `fetch` capability) or
 * the server's outbound guard, an HTTP proxy on another socket that checks every target
 * (src/runtime/outbound.ts), reached with a token that names this process.
 */
export interface WorkerdConfig {
  /** Unix socket the worker answers on. */
  socket: string;
  /** The bundle's file name beside the config (`worker.mjs`). */
  module: string;
  compatibilityDate: string;
  /** `env` text bindings: the space's variables and secrets. */
  env: Record<string, string>;
  /** The server's outbound proxy socket and this process's token; null: outbound network denied. */
  outbound: { socket: string; header: string; token: string } | null;
  /**
   * The server's runtime log sink and this process's token: a tail worker (module `tail.mjs` beside
   * the config) receives each request's trace and posts it there. Null: no runtime logs.
   */
  logs?: { socket: string; header: string; token: string } | null;
  /**
   * The server's storage binding and this process's token: `env.STORAGE` is a workerd `wrapped`
   * binding made by the internal module `spaces:storage` (file `storage.mjs` beside the config) over
   * this service. Null: no `env.STORAGE`.
   */
  storage?: { socket: string; header: string; token: string } | null;
  /**
   * The server's bindings channel (src/runtime/bindings.ts): its socket, this process's token and
   * the binding names; each becomes a service binding `__SPACES_<NAME>` to it. Null: no bindings.
   */
  bindings?: { socket: string; header: string; token: string; names: string[] } | null;
  /** The shim module (main) written beside `module`; absent: `module` is the main module. */
  shim?: string;
}

/** A capnp text literal: `\\`, `"` and control characters escaped (`\\xNN`); other UTF-8 as is. */
const str = (s: string) =>
  `"${s.replace(/[\\"\u0000-\u001f\u007f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`)}"`;

const RESERVED_BINDINGS = new Set(['STORAGE', 'DB']);

export function workerdConfig(c: WorkerdConfig): string {
  const bindings = Object.entries(c.env)
    // `STORAGE` and `DB` are the platform's bindings: a variable of that name does not shadow them;
    // `__SPACES_*` names are the bindings channel's.
    .filter(([name]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !RESERVED_BINDINGS.has(name))
    .filter(([name]) => !name.startsWith('__SPACES_'))
    .map(([name, value]) => `(name = ${str(name)}, text = ${str(value)})`);
  const services: string[] = [];
  if (c.bindings) {
    const b = c.bindings;
    services.push(
      `(name = "bindings", external = (address = ${str(`unix:${b.socket}`)}, http = (injectRequestHeaders = [(name = ${str(b.header)}, value = ${str(b.token)})])))`,
    );
    for (const name of b.names)
      bindings.push(
        `(name = ${str(`__SPACES_${name.toUpperCase().replace(/-/g, '_')}`)}, service = "bindings")`,
      );
  }
  const modules = [
    ...(c.shim ? [`(name = ${str(c.shim)}, esModule = embed ${str(c.shim)})`] : []),
    `(name = ${str(c.module)}, esModule = embed ${str(c.module)})`,
  ];
  const outbound = c.outbound
    ? `(name = "outbound", external = (address = ${str(`unix:${c.outbound.socket}`)}, http = (style = proxy, injectRequestHeaders = [(name = ${str(c.outbound.header)}, value = ${str(c.outbound.token)})])))`
    : '(name = "outbound", network = (allow = [], deny = []))';
  const logs = c.logs
    ? `(name = "tail", worker = .tailWorker),
    (name = "logs", external = (address = ${str(`unix:${c.logs.socket}`)}, http = (injectRequestHeaders = [(name = ${str(c.logs.header)}, value = ${str(c.logs.token)})]))),`
    : '';
  const storage = c.storage
    ? `(name = "storage", external = (address = ${str(`unix:${c.storage.socket}`)}, http = (injectRequestHeaders = [(name = ${str(c.storage.header)}, value = ${str(c.storage.token)})]))),`
    : '';
  if (c.storage)
    bindings.push(
      `(name = "STORAGE", wrapped = (moduleName = ${str(STORAGE_MODULE_NAME)}, innerBindings = [(name = "svc", service = "storage")]))`,
    );
  const tailWorker = c.logs
    ? `const tailWorker :Workerd.Worker = (
  modules = [(name = "tail.mjs", esModule = embed "tail.mjs")],
  compatibilityDate = "2024-09-01",
  globalOutbound = "logs",
);
`
    : '';
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    ${outbound},${services.map((x) => `\n    ${x},`).join('')}
    ${logs}
    ${storage}
  ],
  sockets = [(name = "http", address = ${str(`unix:${c.socket}`)}, http = (), service = "main")],${
    c.storage
      ? `\n  extensions = [(modules = [(name = ${str(STORAGE_MODULE_NAME)}, esModule = embed "storage.mjs", internal = true)])],`
      : ''
  }
);
const worker :Workerd.Worker = (
  modules = [${modules.join(', ')}],
  compatibilityDate = ${str(c.compatibilityDate)},
  bindings = [${bindings.join(', ')}],
  globalOutbound = "outbound",${c.logs ? '\n  tails = ["tail"],' : ''}
);
${tailWorker}`;
}
