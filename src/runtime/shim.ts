/**
 * The worker's main module (issue 26): written by the pool before the stored `worker.mjs`, it imports
 * the user's default export and calls its `fetch`/`scheduled` with an `env` where the internal service
 * bindings (`__SPACES_<NAME>`, Fetchers reaching the server's bindings channel) are replaced by
 * friendly objects (`env.DB`), and the internal names removed. The stored bundle never changes: a new
 * shim applies to every version on its next process start.
 *
 * Each adapter is its own exported source string, so another binding is one more entry in
 * {@link SHIM_ADAPTERS}.
 */

/** The shim's module name (the config's first module is the main one). */
export const SHIM_MODULE = 'spaces-entry.mjs';
/** Prefix of the internal binding names; a user variable can't have it (it is dropped from `env`). */
export const INTERNAL_BINDING_PREFIX = '__SPACES_';

/** One adapter: the internal binding it wraps, the `env` name it becomes, and a JS function expression `(fetcher) => object`. */
export interface ShimAdapter {
  internal: string;
  envName: string;
  source: string;
}

/** `__spacesCall(fetcher, path, body)`: one JSON call to the bindings channel; a failure throws an Error with the server's message. */
export const CALL_SOURCE = `async function __spacesCall(fetcher, path, body) {
  const res = await fetcher.fetch('http://bindings/' + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? null),
  });
  let out;
  try { out = await res.json(); } catch { throw new Error('the binding answered ' + res.status); }
  if (out && out.error) {
    const err = new Error(out.error.message);
    err.code = out.error.code;
    throw err;
  }
  return out ? out.result : null;
}
function __spacesValue(v) {
  if (v === undefined) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof ArrayBuffer) v = new Uint8Array(v);
  if (ArrayBuffer.isView(v)) {
    const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    let s = '';
    for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return { $blob: btoa(s) };
  }
  if (v === null || typeof v === 'number' || typeof v === 'string') return v;
  throw new TypeError('D1_TYPE_ERROR: type ' + typeof v + ' cannot be bound');
}`;

/** `env.DB`: D1-like prepared statements over the space's SQLite database. */
export const DB_ADAPTER: ShimAdapter = {
  internal: '__SPACES_DB',
  envName: 'DB',
  source: `(fetcher) => {
  const call = (op, body) => __spacesCall(fetcher, 'db/' + op, body);
  class PreparedStatement {
    constructor(sql, params) { this.sql = sql; this.params = params || []; }
    bind(...values) { return new PreparedStatement(this.sql, values.map(__spacesValue)); }
    all() { return call('all', { sql: this.sql, params: this.params }); }
    first(column) {
      if (column !== undefined && typeof column !== 'string') throw new TypeError('first(column): column must be a string');
      return call('first', { sql: this.sql, params: this.params, column: column ?? null });
    }
    run() { return call('run', { sql: this.sql, params: this.params }); }
    raw(options) { return call('raw', { sql: this.sql, params: this.params, columnNames: !!(options && options.columnNames) }); }
  }
  return Object.freeze({
    prepare(sql) {
      if (typeof sql !== 'string') throw new TypeError('prepare(sql): sql must be a string');
      return new PreparedStatement(sql, []);
    },
    exec(sql) {
      if (typeof sql !== 'string') throw new TypeError('exec(sql): sql must be a string');
      return call('exec', { sql });
    },
    batch(statements) {
      if (!Array.isArray(statements) || !statements.every((s) => s instanceof PreparedStatement))
        throw new TypeError('batch(statements): an array of prepared statements');
      return call('batch', { statements: statements.map((s) => ({ sql: s.sql, params: s.params })) });
    },
  });
}`,
};

/** The adapters every worker gets, in order. */
export const SHIM_ADAPTERS: ShimAdapter[] = [DB_ADAPTER];

/** The shim's source for a worker whose bundle is `userModule`, with these adapters. */
export function shimSource(userModule = 'worker.mjs', adapters: ShimAdapter[] = SHIM_ADAPTERS): string {
  const table = adapters
    .map((a) => `  ${JSON.stringify(a.internal)}: [${JSON.stringify(a.envName)}, ${a.source}],`)
    .join('\n');
  return `import user from ${JSON.stringify(`./${userModule}`)};
${CALL_SOURCE}
const ADAPTERS = {
${table}
};
const wrapped = new WeakMap();
function spacesEnv(env) {
  let out = wrapped.get(env);
  if (out) return out;
  out = {};
  for (const [name, value] of Object.entries(env)) {
    const adapter = ADAPTERS[name];
    if (adapter) out[adapter[0]] = adapter[1](value);
    else if (!name.startsWith(${JSON.stringify(INTERNAL_BINDING_PREFIX)})) out[name] = value;
  }
  wrapped.set(env, out);
  return out;
}
const handler = user && typeof user === 'object' ? user : {};
const entry = {};
if (typeof handler.fetch === 'function')
  entry.fetch = (request, env, ctx) => handler.fetch(request, spacesEnv(env), ctx);
if (typeof handler.scheduled === 'function')
  entry.scheduled = (controller, env, ctx) => handler.scheduled(controller, spacesEnv(env), ctx);
export default entry;
`;
}
