// src/cli/main.ts
import { CommanderError } from "commander";

// src/cli/commands.ts
import { spawn } from "node:child_process";
import fs4 from "node:fs";
import fsp2 from "node:fs/promises";
import path4 from "node:path";
import { Readable as Readable2 } from "node:stream";
import zlib3 from "node:zlib";
import tar2 from "tar-stream";

// src/cli/http.ts
var ApiProblem = class extends Error {
  constructor(problem) {
    super(problem.detail || problem.title);
    this.problem = problem;
  }
  problem;
  get status() {
    return this.problem.status;
  }
};
var UsageError = class extends Error {
};
var RETRYABLE = /* @__PURE__ */ new Set([408, 425, 429, 500, 502, 503, 504]);
var MAX_DELAY_MS = 3e4;
function retryDelay(attempt, retryAfter, now = Date.now()) {
  if (retryAfter) {
    const secs = Number(retryAfter);
    if (Number.isFinite(secs) && secs >= 0) return Math.min(secs * 1e3, MAX_DELAY_MS);
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.min(Math.max(0, at - now), MAX_DELAY_MS);
  }
  const base = Math.min(250 * 2 ** attempt, MAX_DELAY_MS);
  return Math.round(base / 2 + Math.random() * (base / 2));
}
function networkProblem(url, err) {
  const cause = err?.cause;
  const why = cause?.code ?? cause?.message ?? err?.message ?? String(err);
  return new ApiProblem({
    type: "about:blank",
    title: "Network error",
    status: 0,
    code: "network_error",
    detail: `Could not reach ${new URL(url).origin}: ${why}.`,
    requestId: "",
    suggestions: ["Check --api-url / SPACES_API_URL and that the server is running."]
  });
}
async function problemOf(res) {
  const text = await res.text();
  try {
    const body = JSON.parse(text);
    if (body && typeof body === "object" && typeof body.code === "string") {
      return new ApiProblem({
        type: body.type ?? "about:blank",
        title: body.title ?? res.statusText,
        status: body.status ?? res.status,
        detail: body.detail ?? "",
        code: body.code,
        requestId: body.requestId ?? res.headers.get("x-request-id") ?? "",
        ...body.pointer ? { pointer: body.pointer } : {},
        ...body.details ? { details: body.details } : {},
        ...body.suggestions ? { suggestions: body.suggestions } : {},
        ...body.next ? { next: body.next } : {}
      });
    }
  } catch {
  }
  return new ApiProblem({
    type: "about:blank",
    title: res.statusText || `HTTP ${res.status}`,
    status: res.status,
    code: res.status === 404 ? "not_found" : `http_${res.status}`,
    detail: text.slice(0, 500) || `The server answered ${res.status}.`,
    requestId: res.headers.get("x-request-id") ?? ""
  });
}
var ApiClient = class {
  constructor(opts) {
    this.opts = opts;
  }
  opts;
  get apiUrl() {
    return this.opts.apiUrl.replace(/\/+$/, "");
  }
  get hasToken() {
    return Boolean(this.opts.token);
  }
  url(path5, query) {
    const u = new URL(
      /^https?:\/\//.test(path5) ? path5 : `${this.apiUrl}${path5.startsWith("/") ? "" : "/"}${path5}`
    );
    for (const [k, v] of Object.entries(query ?? {})) if (v !== void 0) u.searchParams.set(k, String(v));
    return u.toString();
  }
  async request(method, path5, o = {}) {
    const res = await this.send(method, path5, o);
    if (o.stream) return res;
    const text = await res.text();
    return text ? JSON.parse(text) : void 0;
  }
  /** Sends with retries; answers the Response of a 2xx, throws ApiProblem otherwise. */
  async send(method, path5, o = {}) {
    const url = this.url(path5, o.query);
    const idempotent = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"].includes(method) || Boolean(o.idempotencyKey);
    const retries = o.retries ?? (idempotent ? 4 : 0);
    const sleep = this.opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    for (let attempt = 0; ; attempt++) {
      const headers = {
        accept: "application/json, application/problem+json",
        "user-agent": this.opts.userAgent ?? "spaces-cli",
        ...o.headers
      };
      const token = o.token ?? this.opts.token;
      if (token && !o.anonymous) headers.authorization = `Bearer ${token}`;
      if (o.idempotencyKey) headers["idempotency-key"] = o.idempotencyKey;
      let body;
      if (o.raw !== void 0) {
        body = typeof o.raw === "function" ? o.raw() : o.raw;
        if (o.contentType) headers["content-type"] = o.contentType;
      } else if (o.body !== void 0) {
        body = JSON.stringify(o.body);
        headers["content-type"] = "application/json";
      }
      let res;
      try {
        res = await fetch(url, {
          method,
          headers,
          body,
          ...body instanceof ReadableStream || isNodeStream(body) ? { duplex: "half" } : {}
        });
      } catch (err) {
        if (attempt < retries) {
          const delayMs = retryDelay(attempt, null);
          this.opts.onRetry?.({ attempt: attempt + 1, delayMs, status: null, url });
          await sleep(delayMs);
          continue;
        }
        throw networkProblem(url, err);
      }
      if (res.ok) return res;
      if (RETRYABLE.has(res.status) && attempt < retries) {
        await res.body?.cancel().catch(() => {
        });
        const delayMs = retryDelay(attempt, res.headers.get("retry-after"));
        this.opts.onRetry?.({ attempt: attempt + 1, delayMs, status: res.status, url });
        await sleep(delayMs);
        continue;
      }
      throw await problemOf(res);
    }
  }
  /** Every item of a paged list, following `pagination.nextCursor`. */
  async *paginate(path5, query = {}) {
    let cursor;
    for (; ; ) {
      const page = await this.request(
        "GET",
        path5,
        {
          query: { limit: 100, ...query, cursor }
        }
      );
      for (const item of page.data) yield item;
      const next = page.pagination?.nextCursor;
      if (!next) return;
      cursor = next;
    }
  }
};
function isNodeStream(b) {
  return typeof b === "object" && b !== null && typeof b.pipe === "function";
}

// src/cli/completion.ts
function commandTree(program) {
  const globals = program.options.flatMap((o) => [o.long, o.short].filter((x) => Boolean(x)));
  const out = [];
  const visit = (cmd, path5) => {
    const subs = cmd.commands.filter((c) => !c._hidden);
    out.push({
      path: path5,
      subcommands: subs.flatMap((c) => [c.name(), ...c.aliases()]),
      flags: [
        .../* @__PURE__ */ new Set([
          ...cmd.options.flatMap((o) => [o.long, o.short].filter((x) => Boolean(x))),
          ...globals,
          "--help"
        ])
      ],
      description: cmd.description()
    });
    for (const c of subs) visit(c, [...path5, c.name()]);
  };
  visit(program, []);
  return out;
}
function completionScript(program, shell) {
  const tree = commandTree(program);
  if (shell === "bash") return bash(tree);
  if (shell === "zsh") return `#compdef spaces
autoload -U +X bashcompinit && bashcompinit
${bash(tree)}`;
  if (shell === "fish") return fish(tree);
  throw new UsageError(`Unknown shell "${shell}": use bash, zsh or fish.`);
}
function bash(tree) {
  const cases = tree.map((n) => `    "${n.path.join(" ")}") words="${[...n.subcommands, ...n.flags].join(" ")}" ;;`).join("\n");
  return `# spaces completion for bash (generated from the command definitions)
_spaces_complete() {
  local cur key="" w words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for w in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$w" in -*) ;; *)
      case " $(_spaces_subs "$key") " in *" $w "*) key="\${key:+$key }$w" ;; esac ;;
    esac
  done
  case "$key" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
_spaces_subs() {
  case "$1" in
${tree.map((n) => `    "${n.path.join(" ")}") echo "${n.subcommands.join(" ")}" ;;`).join("\n")}
  esac
}
complete -o default -F _spaces_complete spaces
`;
}
function fish(tree) {
  const lines = [
    "# spaces completion for fish (generated from the command definitions)",
    "complete -c spaces -f"
  ];
  for (const n of tree) {
    const cond = n.path.length === 0 ? "__fish_use_subcommand" : `__fish_seen_subcommand_from ${n.path[n.path.length - 1]}`;
    for (const s of n.subcommands) lines.push(`complete -c spaces -n '${cond}' -a ${s}`);
    for (const f of n.flags) {
      if (f.startsWith("--")) lines.push(`complete -c spaces -n '${cond}' -l ${f.slice(2)}`);
      else lines.push(`complete -c spaces -n '${cond}' -s ${f.slice(1)}`);
    }
  }
  return `${lines.join("\n")}
`;
}

// src/cli/device.ts
var CLIENT_ID = "spaces-cli";
var DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
var SCOPE = "offline_access spaces:read spaces:write publish:write teams:read";
function oauthProblem(status, body, what) {
  return new ApiProblem({
    type: "about:blank",
    title: "Login failed",
    status,
    code: body.error ?? "login_failed",
    detail: body.error_description ?? `${what} answered ${status}.`,
    requestId: "",
    suggestions: ["Try again, or log in with an API key: `spaces login --token <key>`."]
  });
}
async function postForm(url, form) {
  let res;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams(form)
    });
  } catch (err) {
    throw new ApiProblem({
      type: "about:blank",
      title: "Network error",
      status: 0,
      code: "network_error",
      detail: `Could not reach ${new URL(url).origin}: ${err.message}.`,
      requestId: ""
    });
  }
  const text = await res.text();
  let body = {};
  try {
    body = JSON.parse(text);
  } catch {
  }
  return { status: res.status, body };
}
async function deviceLogin(ctx, o) {
  const sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  const start = await postForm(`${ctx.apiUrl}/v1/auth/oauth2/device`, { client_id: CLIENT_ID, scope: SCOPE });
  if (start.status !== 200 || typeof start.body.device_code !== "string") {
    if (start.status === 404) {
      throw new ApiProblem({
        type: "about:blank",
        title: "Device login unavailable",
        status: 404,
        code: "feature_unavailable",
        detail: `${ctx.apiUrl} does not offer device login.`,
        requestId: "",
        suggestions: ["Create an API key in the dashboard and run `spaces login --token <key>`."]
      });
    }
    throw oauthProblem(start.status, start.body, "The device authorization endpoint");
  }
  const d = start.body;
  const url = d.verification_uri_complete ?? d.verification_uri;
  ctx.err(`To log in, open ${d.verification_uri} and enter the code: ${d.user_code}`);
  if (d.verification_uri_complete) ctx.err(`(or open ${d.verification_uri_complete})`);
  if (ctx.json)
    ctx.writeJsonLine({
      event: "device_code",
      userCode: d.user_code,
      verificationUri: d.verification_uri,
      verificationUriComplete: d.verification_uri_complete ?? null,
      expiresIn: d.expires_in
    });
  if (o.browser && ctx.io.stderr.isTTY) o.open(url);
  let interval = Math.max(1, d.interval ?? 5) * 1e3;
  const deadline = Date.now() + d.expires_in * 1e3;
  while (Date.now() < deadline) {
    await sleep(interval);
    const r = await postForm(`${ctx.apiUrl}/v1/auth/oauth2/token`, {
      grant_type: DEVICE_GRANT,
      device_code: d.device_code,
      client_id: CLIENT_ID
    });
    if (r.status === 200 && typeof r.body.access_token === "string") {
      return {
        accessToken: r.body.access_token,
        ...typeof r.body.refresh_token === "string" ? { refreshToken: r.body.refresh_token } : {}
      };
    }
    const error = r.body.error;
    if (error === "authorization_pending") continue;
    if (error === "slow_down") {
      interval += 5e3;
      continue;
    }
    throw oauthProblem(r.status, r.body, "The token endpoint");
  }
  throw oauthProblem(
    400,
    { error: "expired_token", error_description: "The code expired before it was approved." },
    ""
  );
}
async function revokeToken(_client, apiUrl, token) {
  try {
    const r = await postForm(`${apiUrl.replace(/\/+$/, "")}/v1/auth/oauth2/revoke`, {
      token,
      client_id: CLIENT_ID
    });
    return r.status === 200;
  } catch {
    return false;
  }
}

// src/cli/files.ts
import { createHash } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import zlib from "node:zlib";
import ignore from "ignore";
import tar from "tar-stream";
import yauzl from "yauzl";
var DEFAULT_IGNORES = [".git", "node_modules", ".spaces", ".*", "!.well-known"];
function isArchive(file) {
  return /\.(zip|tgz|tar\.gz)$/i.test(file);
}
async function collect(input) {
  let st;
  try {
    st = await fsp.stat(input);
  } catch {
    throw new UsageError(`${input}: no such file or directory.`);
  }
  if (st.isDirectory()) return { root: input, files: await walk(input), kind: "directory" };
  if (isArchive(input))
    return { root: path.dirname(input), files: await readArchive(input), kind: "archive" };
  return {
    root: path.dirname(input),
    files: [{ path: path.basename(input), size: st.size, abs: path.resolve(input) }],
    kind: "file"
  };
}
async function walk(root) {
  const realRoot = await fsp.realpath(root);
  const ig = ignore().add(DEFAULT_IGNORES);
  let defaultsOnly = true;
  try {
    ig.add(await fsp.readFile(path.join(root, ".spacesignore"), "utf8"));
    defaultsOnly = false;
  } catch {
  }
  const out = [];
  function visit(dir, rel) {
    const entries = fs.readdirSync(dir, { withFileTypes: true });
    for (const e of entries) {
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      const abs = `${dir}${path.sep}${e.name}`;
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        let real;
        try {
          real = fs.realpathSync(abs);
        } catch {
          continue;
        }
        if (real !== realRoot && !real.startsWith(realRoot + path.sep)) continue;
        const s = fs.statSync(real);
        isDir = s.isDirectory();
        isFile = s.isFile();
      }
      const mayMatch = !defaultsOnly || e.name.startsWith(".") || e.name === "node_modules";
      if (isDir) {
        if (mayMatch && ig.ignores(`${relPath}/`)) continue;
        visit(abs, relPath);
      } else if (isFile) {
        if (mayMatch && ig.ignores(relPath)) continue;
        out.push({ path: relPath, size: 0, abs });
      }
    }
  }
  visit(path.resolve(root), "");
  for (const f of out) {
    const s = fs.statSync(f.abs);
    f.size = s.size;
    f.stat = { size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, ino: s.ino };
  }
  out.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return out;
}
function safeRelative(name) {
  const p = name.replace(/\\/g, "/").replace(/^\.\//, "");
  if (!p || p.startsWith("/") || p.split("/").some((s) => s === ".." || s === "")) return null;
  return p;
}
async function readArchive(file) {
  if (/\.zip$/i.test(file)) return readZip(file);
  const out = [];
  const extract = tar.extract();
  const done = new Promise((resolve, reject) => {
    extract.on("entry", (h, stream, next) => {
      const chunks = [];
      stream.on("data", (c) => chunks.push(c));
      stream.on("end", () => {
        const p = h.type === "file" ? safeRelative(h.name) : null;
        if (h.type === "file" && !p) return reject(new UsageError(`${file}: unsafe entry path "${h.name}".`));
        if (p) {
          const bytes = Buffer.concat(chunks);
          out.push({ path: p, size: bytes.length, bytes });
        }
        next();
      });
      stream.on("error", reject);
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
  });
  fs.createReadStream(file).pipe(zlib.createGunzip()).on("error", (e) => extract.destroy(e)).pipe(extract);
  await done;
  return out.sort((a, b) => a.path < b.path ? -1 : 1);
}
function readZip(file) {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(new UsageError(`${file}: not a readable zip (${err?.message}).`));
      const out = [];
      zip.on("entry", (entry) => {
        if (entry.fileName.endsWith("/")) return zip.readEntry();
        const p = safeRelative(entry.fileName);
        if (!p) return reject(new UsageError(`${file}: unsafe entry path "${entry.fileName}".`));
        zip.openReadStream(entry, (e, s) => {
          if (e || !s) return reject(e);
          const chunks = [];
          s.on("data", (c) => chunks.push(c));
          s.on("end", () => {
            const bytes = Buffer.concat(chunks);
            out.push({ path: p, size: bytes.length, bytes });
            zip.readEntry();
          });
          s.on("error", reject);
        });
      });
      zip.on("end", () => resolve(out.sort((a, b) => a.path < b.path ? -1 : 1)));
      zip.on("error", reject);
      zip.readEntry();
    });
  });
}
async function hashAll(files, onFile, concurrency = 16, cache) {
  let done = 0;
  let bytes = 0;
  const todo = [];
  for (const f of files) {
    const cached = cache && f.abs && f.stat ? cache.lookup(f.path, f.stat) : null;
    if (!cached) {
      todo.push(f);
      continue;
    }
    f.sha256 = cached;
    done++;
    bytes += f.size;
  }
  if (done) onFile?.(done, bytes);
  await mapLimit(todo, concurrency, async (f) => {
    f.sha256 = await sha256Of(f);
    if (cache && f.abs && f.stat) cache.remember(f.path, f.stat, f.sha256);
    done++;
    bytes += f.size;
    onFile?.(done, bytes);
  });
  return files;
}
async function sha256Of(f) {
  if (f.bytes) return createHash("sha256").update(f.bytes).digest("hex");
  const abs = f.abs;
  if (f.size <= 64 * 1024) return createHash("sha256").update(fs.readFileSync(abs)).digest("hex");
  if (f.size <= 4 * 1024 * 1024)
    return createHash("sha256").update(await fsp.readFile(abs)).digest("hex");
  const h = createHash("sha256");
  for await (const c of fs.createReadStream(abs)) h.update(c);
  return h.digest("hex");
}
async function bodyOf(f) {
  if (f.bytes) return new Blob([new Uint8Array(f.bytes)]);
  return fs.openAsBlob(f.abs);
}
async function contentOf(f) {
  return f.bytes ?? fsp.readFile(f.abs);
}
function tarStream(files) {
  const pack = tar.pack();
  (async () => {
    try {
      for (const f of files) {
        const bytes = await contentOf(f);
        await new Promise(
          (resolve, reject) => pack.entry({ name: f.path, size: bytes.length }, bytes, (e) => e ? reject(e) : resolve())
        );
      }
      pack.finalize();
    } catch (e) {
      pack.destroy(e);
    }
  })();
  return Readable.from(pack);
}
async function mapLimit(items, limit, fn) {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  });
  await Promise.all(workers);
}

// src/cli/program.ts
import { Command, Option } from "commander";
var CLI_VERSION = "0.1.0";
var VERSION_REF = "`ver_\u2026`, `v12`, `12` or `latest`";
function buildProgram(run, actions2) {
  const program = new Command("spaces").description("Publish and manage sites on a Spaces server.").addOption(new Option("--api-url <url>", "API base URL").env("SPACES_API_URL")).addOption(new Option("--team <team>", "team id or slug").env("SPACES_TEAM")).addOption(new Option("--space <space>", "space id, slug or live URL").env("SPACES_SPACE")).addOption(new Option("--token <token>", "credential (API key or token)").env("SPACES_TOKEN")).addOption(new Option("--profile <name>", "named profile (server + credential)").env("SPACES_PROFILE")).option("--json", "machine-readable output on stdout only").option("--stream", "with --json: JSON Lines progress events, then a `result` event").option("-y, --yes", "do not ask for confirmation").addHelpText(
    "after",
    "\nRun `spaces -V` for the version. Exit codes: 0 ok, 1 error, 2 usage, 3 auth, 4 not found, 5 conflict, 6 limits."
  ).showSuggestionAfterError(true).enablePositionalOptions(false);
  const a = (name) => {
    const fn = actions2[name];
    if (!fn) throw new Error(`no action for ${name}`);
    return run(fn);
  };
  program.command("login").description("Log in: device flow in the browser, or store an API key given with --token").option("--no-browser", "do not try to open a browser").action(a("login"));
  program.command("logout").description("Forget the stored credential (and revoke it when the CLI created it)").action(a("logout"));
  program.command("whoami").description("Show the account and credential in use").action(a("whoami"));
  program.command("status").description("Show profile, API URL, account, team and the linked space").action(a("status"));
  program.command("switch").argument("<team>", "team id or slug").description("Make a team the default for this profile").action(a("switch"));
  program.command("profiles").description("List profiles (server + credential); --profile NAME selects one").action(a("profiles"));
  program.command("publish").alias("deploy").argument("[path]", "directory, single file, or .zip / .tar.gz archive (default: .)").description("Publish files as a new version: creates the space on first run, uploads only what changed").addOption(
    new Option("--target <target>", "production goes live; preview does not").choices([
      "production",
      "preview"
    ])
  ).option("-m, --message <text>", "a note kept with the version").option("--slug <slug>", "slug of a space created by this publish").option("--name <title>", "title of a space created by this publish").addOption(
    new Option("--spa <mode>", "single-page app fallback to /index.html").choices(["auto", "true", "false"]).default("auto")
  ).option("--dry-run", "show what would be uploaded; change nothing").option("--idempotency-key <key>", "make a retried publish safe").action(a("publish"));
  program.command("init").description("Write spaces.jsonc with a $schema the server serves (editor autocomplete)").option("--force", "overwrite an existing spaces.jsonc").action(a("init"));
  program.command("link").argument("[space]", "space id, slug or live URL").description("Link this directory to a space (.spaces/state.json)").action(a("link"));
  program.command("unlink").description("Remove the link of this directory").action(a("unlink"));
  program.command("inspect").argument("[space]", "space id, slug or live URL").description("Show a space: URLs, channels, settings").action(a("inspect"));
  program.command("open").argument("[space]", "space id, slug or live URL").description("Print the live URL (and open it in a browser on a terminal)").action(a("open"));
  const versions = program.command("versions").description("Versions of a space");
  versions.command("ls").description("List versions, newest first").option("--limit <n>", "how many", "20").action(a("versions.ls"));
  versions.command("get").argument("<version>", VERSION_REF).description("Show one version").action(a("versions.get"));
  versions.command("rm").argument("<version>", VERSION_REF).description("Delete a version (not one a channel points at)").action(a("versions.rm"));
  versions.command("files").argument("[version]", VERSION_REF, "latest").description("List the files of a version").action(a("versions.files"));
  program.command("promote").argument("<version>", VERSION_REF).option("--channel <name>", "channel to move", "live").description("Point a channel at a version").action(a("promote"));
  program.command("rollback").argument("[version]", `${VERSION_REF}; default: the version live before the current one`).option("--channel <name>", "channel to move", "live").description("Put an earlier version live again").action(a("rollback"));
  const channels = program.command("channels").description("Channels (named pointers to versions)");
  channels.command("ls").description("List channels").action(a("channels.ls"));
  channels.command("history").argument("[channel]", "channel name", "live").option("--limit <n>", "how many moves", "20").description("Moves of a channel, newest first").action(a("channels.history"));
  program.command("diff").argument("<from>", VERSION_REF).argument("<to>", VERSION_REF).description("Paths added, changed and removed from one version to another").action(a("diff"));
  program.command("download").option("--version <version>", VERSION_REF, "latest").requiredOption("-o, --output <dir>", "directory to write the files into").description("Download a version\u2019s files").action(a("download"));
  const spaces = program.command("spaces").description("Spaces you can reach");
  spaces.command("ls").option("--limit <n>", "how many", "50").description("List spaces").action(a("spaces.ls"));
  spaces.command("create").option("--slug <slug>", "the space\u2019s name in its hostname").option("--name <title>", "title").option("--link", "link this directory to the new space").description("Create an empty space").action(a("spaces.create"));
  spaces.command("rename").argument("<slug>", "new slug").description("Rename the space (the old hostname keeps working)").action(a("spaces.rename"));
  spaces.command("rm").argument("[space]", "space id, slug or live URL").description("Delete a space").action(a("spaces.rm"));
  spaces.command("claim").option("--key <key>", "space key (sfc_\u2026); default: the one kept by an anonymous publish here").description("Claim an anonymous space into your team").action(a("spaces.claim"));
  const teams = program.command("teams").description("Teams");
  teams.command("ls").description("List your teams").action(a("teams.ls"));
  teams.command("create").argument("<name>", "team name").option("--slug <slug>", "team slug").description("Create a team").action(a("teams.create"));
  teams.command("members").argument("[team]", "team id or slug (default: --team)").description("List members").action(a("teams.members"));
  teams.command("invite").argument("<email>", "who to invite").addOption(
    new Option("--role <role>", "their role").choices(["owner", "admin", "member"]).default("member")
  ).description("Invite someone to the team").action(a("teams.invite"));
  const keys = program.command("api-keys").description("API keys of your account");
  keys.command("create").argument("<name>", "a name to recognise the key by").option("--preset <preset>", "scope preset (e.g. space_publisher, team_admin)").option("--expires-at <iso>", "expiry (ISO 8601)").description("Create a key (shown once)").action(a("api-keys.create"));
  keys.command("ls").description("List keys").action(a("api-keys.ls"));
  keys.command("revoke").argument("<id>", "key id").description("Revoke a key").action(a("api-keys.revoke"));
  const vars = program.command("vars").description("Variables of a space");
  vars.command("ls").description("List variables (secret values are never shown)").action(a("vars.ls"));
  vars.command("set").argument("<name>", "variable name").argument("[value]", "value; read from stdin when omitted").option("--secret", "write-only: the value is never shown again").description("Set a variable").action(a("vars.set"));
  vars.command("rm").argument("<name>", "variable name").description("Delete a variable").action(a("vars.rm"));
  program.command("operations").alias("logs").option("--limit <n>", "how many", "20").description("Recent operations of a space").action(a("operations"));
  program.command("api").argument("<method>", "HTTP method").argument("<path>", "path under the API URL, e.g. /v1/spaces").option("--input <source>", "request body: @file, or - for stdin").option("--paginate", "follow pagination; print items as JSON Lines").option("--idempotency-key <key>", "Idempotency-Key header").description("Call any API endpoint with your credential (the escape hatch)").action(a("api"));
  program.command("docs").argument("[query...]", "search words").description("Search the server\u2019s documentation").action(a("docs"));
  program.command("completion").argument("<shell>", "bash, zsh or fish").description("Print a shell completion script").action(a("completion"));
  return program;
}
function definitions() {
  const noop = async () => {
  };
  return buildProgram(() => async () => {
  }, new Proxy({}, { get: () => noop }));
}

// src/cli/publish.ts
import { randomUUID } from "node:crypto";
import { buffer } from "node:stream/consumers";
import zlib2 from "node:zlib";

// src/cli/hash-cache.ts
import { createHash as createHash2 } from "node:crypto";
import fs2 from "node:fs";
import path2 from "node:path";
var SETTLE_MS = 2e3;
var VERSION = 3;
var HEX = /^[0-9a-f]*$/;
var HashCache = class {
  constructor(configDir2, root, now = Date.now) {
    this.now = now;
    this.root = path2.resolve(root);
    const id = createHash2("sha256").update(this.root).digest("hex").slice(0, 24);
    this.file = path2.join(configDir2, "cache", `hashes-${id}.json`);
    try {
      const data = JSON.parse(fs2.readFileSync(this.file, "utf8"));
      const n = Array.isArray(data.paths) ? data.paths.length : -1;
      if (data.version === VERSION && data.root === this.root && n >= 0 && Array.isArray(data.stats) && data.stats.length === n * 4 && typeof data.sha256 === "string" && data.sha256.length === n * 64 && HEX.test(data.sha256)) {
        this.paths = data.paths;
        this.stats = data.stats;
        this.sums = data.sha256;
      }
    } catch {
    }
  }
  now;
  file;
  root;
  paths = [];
  stats = [];
  sums = "";
  /** Where the next lookup probably is: callers ask in path order. */
  hint = 0;
  /** This run's view: path → [stat, sha256]. */
  next = /* @__PURE__ */ new Map();
  /** Entries of `next` that are not the saved ones. */
  changed = 0;
  /** Files answered from the cache in this run. */
  hits = 0;
  /** The remembered sha256 of the file at `rel` (its path in the site) if its stat is unchanged. */
  lookup(rel, st) {
    const i = this.indexOf(rel);
    if (i < 0) return null;
    const s = this.stats;
    const k = i * 4;
    if (s[k] !== st.size || s[k + 1] !== st.mtimeMs || s[k + 2] !== st.ctimeMs || s[k + 3] !== st.ino)
      return null;
    const sha256 = this.sums.slice(i * 64, i * 64 + 64);
    this.hits++;
    this.next.set(rel, { st, sha256 });
    return sha256;
  }
  /** Remembers a freshly computed hash (unless the file changed too recently to trust its stat). */
  remember(rel, st, sha256) {
    const newest = Math.max(st.mtimeMs, st.ctimeMs);
    if (newest + SETTLE_MS > this.now()) return;
    this.next.set(rel, { st, sha256 });
    this.changed++;
  }
  /**
   * Writes what this run saw (files no longer present are forgotten), unless that is exactly what is
   * saved already; errors are ignored.
   */
  save() {
    if (this.changed === 0 && this.next.size === this.paths.length) return;
    try {
      const paths = [...this.next.keys()].sort((a, b) => a < b ? -1 : a > b ? 1 : 0);
      const stats = [];
      const sums = [];
      for (const p of paths) {
        const { st, sha256 } = this.next.get(p);
        stats.push(st.size, st.mtimeMs, st.ctimeMs, st.ino);
        sums.push(sha256);
      }
      const saved = { version: VERSION, root: this.root, paths, stats, sha256: sums.join("") };
      fs2.mkdirSync(path2.dirname(this.file), { recursive: true, mode: 448 });
      const tmp = `${this.file}.${process.pid}.tmp`;
      fs2.writeFileSync(tmp, JSON.stringify(saved), { mode: 384 });
      fs2.renameSync(tmp, this.file);
    } catch {
    }
  }
  /** Index of `rel` in the saved paths, or -1: the hinted slot first, else a binary search. */
  indexOf(rel) {
    const paths = this.paths;
    if (paths[this.hint] === rel) return this.hint++;
    let lo = 0;
    let hi = paths.length - 1;
    while (lo <= hi) {
      const mid = lo + hi >> 1;
      const p = paths[mid];
      if (p === rel) {
        this.hint = mid + 1;
        return mid;
      }
      if (p < rel) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
};

// src/cli/store.ts
import fs3 from "node:fs";
import os from "node:os";
import path3 from "node:path";
var DEFAULT_API_URL = "http://localhost:8080";
function configDir(env = process.env) {
  if (env.SPACES_CONFIG_DIR) return env.SPACES_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || path3.join(os.homedir(), ".config");
  return path3.join(base, "spaces");
}
function writePrivate(file, value) {
  fs3.mkdirSync(path3.dirname(file), { recursive: true, mode: 448 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs3.writeFileSync(tmp, `${JSON.stringify(value, null, 2)}
`, { mode: 384 });
  fs3.chmodSync(tmp, 384);
  fs3.renameSync(tmp, file);
}
function readJson(file) {
  try {
    return JSON.parse(fs3.readFileSync(file, "utf8"));
  } catch (err) {
    if (err.code === "ENOENT") return null;
    throw new Error(`${file} is not valid JSON; fix or delete it.`);
  }
}
var ConfigStore = class {
  file;
  constructor(env = process.env) {
    this.file = path3.join(configDir(env), "config.json");
  }
  read() {
    const c = readJson(this.file);
    return { currentProfile: c?.currentProfile, profiles: c?.profiles ?? {} };
  }
  write(c) {
    writePrivate(this.file, c);
  }
  update(fn) {
    const c = this.read();
    fn(c);
    this.write(c);
    return c;
  }
};
var StateStore = class {
  constructor(projectDir) {
    this.projectDir = projectDir;
    this.file = path3.join(projectDir, ".spaces", "state.json");
  }
  projectDir;
  file;
  read() {
    return readJson(this.file);
  }
  write(s) {
    writePrivate(this.file, s);
    const gi = path3.join(this.projectDir, ".spaces", ".gitignore");
    if (!fs3.existsSync(gi)) fs3.writeFileSync(gi, "*\n");
  }
  clear() {
    fs3.rmSync(this.file, { force: true });
  }
};

// src/cli/publish.ts
var SMALL_FILE = 512 * 1024;
var BATCH_MIN_FILES = 16;
var BATCH_MAX_FILES = 2e3;
var BATCH_MAX_BYTES = 32 * 1024 * 1024;
var PUT_CONCURRENCY = 8;
var BATCH_CONCURRENCY = 2;
function human(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  const u = ["KiB", "MiB", "GiB"];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${u[i]}`;
}
async function publish(ctx, input, o) {
  const progress = ctx.progress();
  const src = await collect(input ?? ".");
  if (src.files.length === 0)
    throw new UsageError(`${input ?? "."}: nothing to publish (every file is ignored).`);
  const totalBytes = src.files.reduce((s, f) => s + f.size, 0);
  const total = src.files.length;
  progress.event("collected", { files: total, bytes: totalBytes, kind: src.kind }, `Found ${total} files`);
  const cache = src.kind === "directory" ? new HashCache(configDir(ctx.io.env), src.root) : void 0;
  const files = await hashAll(
    src.files,
    (done, bytes) => progress.event("hashing", { done, total, bytes }, `Hashing ${done}/${total} files (${human(bytes)})`),
    16,
    cache
  );
  cache?.save();
  progress.event("hashed", { files: total, bytes: totalBytes, fromCache: cache?.hits ?? 0 });
  const explicit = ctx.opts.space || ctx.io.env.SPACES_SPACE;
  const linked = ctx.linked;
  const hasPerson = Boolean(ctx.token);
  if (o.dryRun) {
    progress.stop();
    return dryRun(ctx, files, explicit ? ctx.spaceRef() : linked?.spaceId ?? null);
  }
  if (!explicit && !linked && !hasPerson) {
    const r2 = await publishAnonymously(ctx, files, o);
    progress.succeed(`Published ${total} files`);
    return report(ctx, r2);
  }
  let created = false;
  let spaceRef;
  if (!explicit && !linked) {
    const body = { teamId: ctx.team, slug: o.slug, title: o.name };
    const res = await ctx.client.request("POST", "/v1/spaces", {
      body,
      idempotencyKey: o.idempotencyKey ? `${o.idempotencyKey}:space` : void 0
    });
    const s = res.data.space;
    ctx.state.write({
      apiUrl: ctx.apiUrl,
      spaceId: s.id,
      slug: s.slug,
      liveUrl: s.liveUrl,
      teamId: s.teamId
    });
    progress.event("space_created", { spaceId: s.id, slug: s.slug }, `Created space ${s.slug}`);
    spaceRef = s.id;
    created = true;
  } else spaceRef = ctx.spaceRef();
  const r = await versionsFlow(ctx, ctx.spaceClient, spaceRef, files, o, progress);
  progress.succeed(r.noop ? "Nothing changed" : `Published ${total} files`);
  report(ctx, { ...r, created });
}
async function versionsFlow(ctx, client, spaceRef, files, o, progress) {
  const total = files.length;
  const totalBytes = files.reduce((s, f) => s + f.size, 0);
  const body = {
    files: files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
    target: o.target,
    message: o.message ?? null,
    source: { type: "direct-upload" }
  };
  progress.event("creating_version", { files: total }, "Creating version");
  const created = await client.request(
    "POST",
    `/v1/spaces/${encodeURIComponent(spaceRef)}/versions`,
    { body, idempotencyKey: o.idempotencyKey, retries: o.idempotencyKey ? 4 : 0 }
  );
  let receipt = created.data;
  const base = { space: receipt.space, files: { total, bytes: totalBytes }, created: false };
  if (receipt.noop) {
    progress.event("noop", { versionId: receipt.version.id });
    return {
      ...base,
      version: receipt.version,
      siteUrl: receipt.space.liveUrl,
      immutableUrl: receipt.version.immutableUrl,
      noop: true,
      uploaded: { files: 0, bytes: 0 }
    };
  }
  const versionId = receipt.version.id;
  const spaceId = receipt.space.id;
  const byPath = new Map(files.map((f) => [f.path, f]));
  const targets = receipt.upload.targets;
  const wanted = targets.map((t) => {
    const f = byPath.get(t.path);
    if (!f) throw new Error(`The server asked for "${t.path}", which is not in the manifest.`);
    return { target: t, file: f };
  });
  const upTotal = wanted.length;
  const upBytes = wanted.reduce((s, w) => s + w.file.size, 0);
  let doneFiles = 0;
  let doneBytes = 0;
  const tick = (n, b) => {
    doneFiles += n;
    doneBytes += b;
    progress.event(
      "uploading",
      { done: doneFiles, total: upTotal, bytes: doneBytes, totalBytes: upBytes },
      `Uploading ${doneFiles}/${upTotal} files (${human(doneBytes)} of ${human(upBytes)})`
    );
  };
  progress.event("upload_plan", { files: upTotal, bytes: upBytes, skipped: total - upTotal });
  const small = wanted.filter((w) => w.file.size <= SMALL_FILE);
  const batched = small.length >= BATCH_MIN_FILES ? small : [];
  const single = wanted.filter((w) => !batched.includes(w));
  const batches = [];
  let cur = [];
  let curBytes = 0;
  for (const w of batched) {
    if (cur.length >= BATCH_MAX_FILES || curBytes + w.file.size > BATCH_MAX_BYTES) {
      batches.push(cur);
      cur = [];
      curBytes = 0;
    }
    cur.push(w);
    curBytes += w.file.size;
  }
  if (cur.length) batches.push(cur);
  const uploadsUrl = `/v1/spaces/${encodeURIComponent(spaceId)}/versions/${versionId}/uploads`;
  await Promise.all([
    mapLimit(batches, BATCH_CONCURRENCY, async (batch) => {
      await client.request("PUT", uploadsUrl, {
        raw: () => tarStream(batch.map((w) => w.file)),
        contentType: "application/x-tar"
      });
      tick(
        batch.length,
        batch.reduce((s, w) => s + w.file.size, 0)
      );
    }),
    mapLimit(single, PUT_CONCURRENCY, async (w) => {
      const blob = await bodyOf(w.file);
      await client.request("PUT", w.target.url, {
        raw: blob,
        contentType: "application/octet-stream",
        anonymous: true
      });
      tick(1, w.file.size);
    })
  ]);
  await applySpa(ctx, client, spaceId, files, o.spa ?? "auto", progress);
  progress.event("finalizing", { versionId }, "Finalizing");
  receipt = (await client.request(
    "POST",
    `/v1/spaces/${encodeURIComponent(spaceId)}/versions/${versionId}/finalize`,
    { retries: 2 }
  )).data;
  progress.event("finalized", { versionId, status: receipt.version.status });
  return {
    ...base,
    space: receipt.space,
    version: receipt.version,
    siteUrl: receipt.space.liveUrl,
    immutableUrl: receipt.version.immutableUrl,
    noop: false,
    uploaded: { files: upTotal, bytes: upBytes }
  };
}
function looksLikeSpa(files) {
  const html = files.filter((f) => /\.html?$/i.test(f.path));
  const hasJs = files.some((f) => /\.m?js$/i.test(f.path));
  const has404 = files.some((f) => /(^|\/)404\.html$/i.test(f.path));
  return html.length === 1 && html[0]?.path === "index.html" && hasJs && !has404;
}
var SPA_FALLBACK = "/index.html";
function isSpaFallback(v) {
  return v === SPA_FALLBACK || typeof v === "object" && v !== null && v.path === SPA_FALLBACK;
}
async function applySpa(ctx, client, spaceId, files, mode, progress) {
  if (mode === "auto" && (files.some((f) => /^spaces\.jsonc?$/.test(f.path)) || !looksLikeSpa(files))) return;
  const { space: space2 } = (await client.request("GET", `/v1/spaces/${spaceId}`)).data;
  const config = { ...space2.config ?? {} };
  if (mode === "false") {
    if (!isSpaFallback(config.fallback)) return;
    delete config.fallback;
  } else {
    if (config.fallback !== void 0 && (mode === "auto" || isSpaFallback(config.fallback))) return;
    config.fallback = SPA_FALLBACK;
  }
  const body = {
    config,
    baseSettingsDigest: space2.settingsDigest
  };
  try {
    await client.request("PATCH", `/v1/spaces/${spaceId}`, { body });
    progress.event("spa", { fallback: mode === "false" ? null : SPA_FALLBACK });
  } catch (err) {
    if (mode !== "auto") throw err;
    if (err instanceof ApiProblem && !ctx.json)
      ctx.err(`warning: could not set the SPA fallback: ${err.message}`);
  }
}
async function publishAnonymously(ctx, files, o) {
  const progress = ctx.progress();
  const total = files.length;
  const totalBytes = files.reduce((s, f) => s + f.size, 0);
  if (o.slug && !ctx.json) ctx.err("note: --slug needs an account; anonymous spaces get a generated name.");
  const makeForm = async () => {
    const form2 = new FormData();
    form2.append("payload", JSON.stringify({ title: o.name, target: o.target, message: o.message ?? null }));
    const gz = await buffer(tarStream(files).pipe(zlib2.createGzip()));
    form2.append("archive", new Blob([new Uint8Array(gz)], { type: "application/gzip" }), "site.tar.gz");
    return form2;
  };
  progress.event(
    "uploading",
    { done: 0, total, bytes: 0, totalBytes },
    `Uploading ${total} files (${human(totalBytes)})`
  );
  const form = await makeForm();
  const res = await ctx.client.request(
    "POST",
    "/v1/publish",
    {
      raw: form,
      anonymous: true,
      idempotencyKey: o.idempotencyKey ?? randomUUID()
    }
  );
  const r = res.data;
  progress.event("uploading", { done: total, total, bytes: totalBytes, totalBytes });
  ctx.state.write({
    apiUrl: ctx.apiUrl,
    spaceId: r.space.id,
    slug: r.space.slug,
    liveUrl: r.space.liveUrl,
    teamId: null,
    ...r.claim ? { spaceKey: r.claim.key, claimUrl: r.claim.claimUrl, expiresAt: r.claim.expiresAt } : {}
  });
  return {
    space: r.space,
    version: r.version,
    siteUrl: r.space.liveUrl,
    immutableUrl: r.version.immutableUrl,
    noop: r.noop,
    created: true,
    files: { total, bytes: totalBytes },
    uploaded: { files: total, bytes: totalBytes },
    ...r.claim ? { claim: { claimUrl: r.claim.claimUrl, expiresAt: r.claim.expiresAt } } : {}
  };
}
async function dryRun(ctx, files, spaceRef) {
  const live = /* @__PURE__ */ new Map();
  let space2 = null;
  if (spaceRef) {
    const s = (await ctx.spaceClient.request(
      "GET",
      `/v1/spaces/${encodeURIComponent(spaceRef)}`
    )).data.space;
    space2 = { id: s.id, slug: s.slug, liveUrl: s.liveUrl };
    if (s.channels.live) {
      for await (const f of ctx.spaceClient.paginate(
        `/v1/spaces/${s.id}/versions/${s.channels.live.versionId}/files`
      )) {
        live.set(f.path, f.sha256);
      }
    }
  }
  const upload = files.filter((f) => live.get(f.path) !== f.sha256).map((f) => ({ path: f.path, size: f.size }));
  const paths = new Set(files.map((f) => f.path));
  const removed = [...live.keys()].filter((p) => !paths.has(p));
  const totalBytes = files.reduce((s, f) => s + f.size, 0);
  const result = {
    space: space2,
    files: { total: files.length, bytes: totalBytes },
    dryRun: { upload, unchanged: files.length - upload.length, removed }
  };
  ctx.result(result, () => {
    const lines = [
      `Dry run: ${files.length} files (${human(totalBytes)})${space2 ? ` for ${space2.slug}` : " for a new space"}.`,
      `Would upload ${upload.length} new or changed files (${human(upload.reduce((s, f) => s + f.size, 0))}); ${result.dryRun.unchanged} unchanged, ${removed.length} removed.`
    ];
    for (const f of upload.slice(0, 50)) lines.push(`  + ${f.path} (${human(f.size)})`);
    if (upload.length > 50) lines.push(`  \u2026 and ${upload.length - 50} more`);
    for (const p of removed.slice(0, 20)) lines.push(`  - ${p}`);
    lines.push(
      "The server also skips bytes it holds from other versions, so the real upload can be smaller."
    );
    return lines.join("\n");
  });
}
function report(ctx, r) {
  ctx.result(r, () => {
    const lines = [];
    if (r.noop) lines.push(`No changes: the live version already has these ${r.files.total} files.`);
    else {
      lines.push(
        `Published ${r.files.total} files (${human(r.files.bytes)}); uploaded ${r.uploaded.files} (${human(r.uploaded.bytes)}).`
      );
    }
    lines.push(`  Live:     ${r.siteUrl}`);
    if (r.version) lines.push(`  Version:  v${r.version.number} ${r.version.id} (${r.version.status})`);
    if (r.immutableUrl) lines.push(`  Version URL: ${r.immutableUrl}`);
    if (r.claim) {
      lines.push("");
      lines.push("This space is anonymous. Claim it to keep it:");
      lines.push(`  Claim:    ${r.claim.claimUrl}`);
      if (r.claim.expiresAt) lines.push(`  Expires:  ${r.claim.expiresAt} unless claimed`);
      lines.push("  Or run `spaces login` and then `spaces spaces claim`.");
    }
    return lines.join("\n");
  });
}

// src/cli/commands.ts
var enc = encodeURIComponent;
function table(rows) {
  if (rows.length === 0) return "";
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((c, i) => i === r.length - 1 ? c : c.padEnd(widths[i])).join("  ")).join("\n");
}
function versionLine(v) {
  return [
    `v${v.number}`,
    v.id,
    v.status,
    v.target,
    v.channels.join(",") || "-",
    String(v.fileCount),
    v.createdAt,
    v.message ?? ""
  ];
}
async function readStdin(ctx) {
  const chunks = [];
  for await (const c of ctx.io.stdin) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString("utf8");
}
async function space(ctx, ref) {
  const r = await ctx.spaceClient.request(
    "GET",
    `/v1/spaces/${enc(ctx.spaceRef(ref))}`
  );
  return r.data.space;
}
function openBrowser(url) {
  const cmd = process.platform === "darwin" ? "open" : process.platform === "win32" ? "cmd" : "xdg-open";
  const args = process.platform === "win32" ? ["/c", "start", "", url] : [url];
  try {
    const child = spawn(cmd, args, { stdio: "ignore", detached: true });
    child.on("error", () => {
    });
    child.unref();
  } catch {
  }
}
async function confirm(ctx, question) {
  if (ctx.opts.yes) return;
  if (!ctx.io.stdin.isTTY || ctx.json) {
    throw new UsageError(`${question} Pass --yes to confirm when not at a terminal.`);
  }
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr });
  const answer = await rl.question(`${question} [y/N] `);
  rl.close();
  if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError("Cancelled.");
}
async function previousVersion(ctx, spaceId, channel) {
  const current = (await ctx.spaceClient.request(
    "GET",
    `/v1/spaces/${enc(spaceId)}/channels`
  )).data.find((c) => c.name === channel);
  if (!current) throw new UsageError(`Channel "${channel}" points at nothing yet.`);
  for await (const move of ctx.spaceClient.paginate(
    `/v1/spaces/${enc(spaceId)}/channels/${enc(channel)}/history`
  )) {
    if (move.versionId === current.versionId && move.previousVersionId && move.previousVersionId !== current.versionId) {
      return move.previousVersionId;
    }
  }
  throw new UsageError(
    `Channel "${channel}" has no earlier version to roll back to; name one: spaces rollback VERSION.`
  );
}
var actions = {
  async login(ctx, _args, o) {
    let token = ctx.opts.token;
    let tokenKind = "api_key";
    let refreshToken;
    if (!token) {
      const t = await deviceLogin(ctx, { browser: o.browser !== false, open: openBrowser });
      token = t.accessToken;
      refreshToken = t.refreshToken;
      tokenKind = "oauth";
    }
    const me = (await ctx.clientWith(token).request("GET", "/v1/account")).data;
    const name = ctx.profileName;
    ctx.configStore.update((c) => {
      const prev = c.profiles[name];
      c.profiles[name] = {
        apiUrl: ctx.apiUrl,
        token,
        tokenKind,
        ...refreshToken ? { refreshToken } : {},
        team: prev?.apiUrl === ctx.apiUrl ? prev.team ?? me.teams[0]?.slug : me.teams[0]?.slug,
        user: me.user?.email ?? me.credential.id
      };
      c.currentProfile ??= name;
    });
    ctx.result(
      { profile: name, apiUrl: ctx.apiUrl, user: me.user, teams: me.teams, credential: me.credential },
      () => `Logged in to ${ctx.apiUrl} as ${me.user?.email ?? me.credential.id} (profile "${name}"). Stored in ${ctx.configStore.file}.`
    );
  },
  async logout(ctx) {
    const name = ctx.profileName;
    const p = ctx.profile;
    if (!p?.token) {
      ctx.result({ profile: name, loggedOut: false }, () => `Not logged in (profile "${name}").`);
      return;
    }
    let revoked = false;
    if (p.tokenKind === "oauth") revoked = await revokeToken(ctx.clientWith(void 0), p.apiUrl, p.token);
    ctx.configStore.update((c) => {
      const cur = c.profiles[name];
      if (cur) {
        delete cur.token;
        delete cur.refreshToken;
        delete cur.tokenKind;
        delete cur.user;
      }
    });
    ctx.result(
      { profile: name, loggedOut: true, revoked },
      () => `Logged out of ${p.apiUrl} (profile "${name}")${revoked ? "; the token is revoked" : ""}.`
    );
  },
  async whoami(ctx) {
    ctx.requireToken();
    const me = (await ctx.client.request("GET", "/v1/account")).data;
    ctx.result(
      me,
      () => [
        `${me.user ? `${me.user.email}` : `credential ${me.credential.id}`} on ${ctx.apiUrl}`,
        `  credential: ${me.credential.kind} ${me.credential.id} (${me.credential.scopes.join(", ")})`,
        `  teams: ${me.teams.map((t) => `${t.slug} (${t.role})`).join(", ") || "none"}`
      ].join("\n")
    );
  },
  async status(ctx) {
    const linked = ctx.linked;
    let account = null;
    let problem = null;
    if (ctx.token) {
      try {
        account = (await ctx.client.request("GET", "/v1/account")).data;
      } catch (err) {
        if (!(err instanceof ApiProblem)) throw err;
        problem = `${err.problem.code}: ${err.problem.detail}`;
      }
    }
    const out = {
      profile: ctx.profileName,
      apiUrl: ctx.apiUrl,
      loggedIn: Boolean(account),
      user: account?.user?.email ?? null,
      team: ctx.team ?? null,
      linked: linked ? {
        spaceId: linked.spaceId,
        slug: linked.slug,
        liveUrl: linked.liveUrl,
        anonymous: Boolean(linked.spaceKey),
        claimUrl: linked.claimUrl ?? null,
        expiresAt: linked.expiresAt ?? null
      } : null,
      problem
    };
    ctx.result(
      out,
      () => [
        `Profile:  ${out.profile}`,
        `API:      ${out.apiUrl}`,
        `Account:  ${out.user ?? (account ? account.credential.id : problem ? `credential refused (${problem})` : "not logged in")}`,
        `Team:     ${out.team ?? "-"}`,
        `Linked:   ${linked ? `${linked.slug} (${linked.spaceId}) ${linked.liveUrl}` : "no space linked here"}`,
        ...linked?.spaceKey ? [`Claim:    ${linked.claimUrl ?? ""}${linked.expiresAt ? ` (expires ${linked.expiresAt})` : ""}`] : []
      ].join("\n")
    );
  },
  async switch(ctx, [team]) {
    ctx.requireToken();
    const t = (await ctx.client.request("GET", `/v1/teams/${enc(team)}`)).data;
    const name = ctx.profileName;
    ctx.configStore.update((c) => {
      c.profiles[name] = { ...c.profiles[name] ?? { apiUrl: ctx.apiUrl }, team: t.slug };
    });
    ctx.result(
      { profile: name, team: { id: t.id, slug: t.slug, name: t.name } },
      () => `Default team of profile "${name}" is now ${t.slug}.`
    );
  },
  async profiles(ctx) {
    const c = ctx.configStore.read();
    const current = ctx.profileName;
    const list = Object.entries(c.profiles).map(([name, p]) => ({
      name,
      current: name === current,
      apiUrl: p.apiUrl,
      user: p.user ?? null,
      team: p.team ?? null,
      loggedIn: Boolean(p.token)
    }));
    ctx.result(
      list,
      () => list.length === 0 ? "No profiles yet. `spaces login` creates one (`--profile NAME --api-url URL` for more servers)." : table(list.map((p) => [p.current ? "*" : " ", p.name, p.apiUrl, p.user ?? "-", p.team ?? "-"]))
    );
  },
  async publish(ctx, [input], o) {
    await publish(ctx, input, o);
  },
  async init(ctx, _args, o) {
    const file = path4.join(ctx.io.cwd, "spaces.jsonc");
    if (fs4.existsSync(file) && !o.force)
      throw new UsageError("spaces.jsonc exists already; --force overwrites it.");
    const text = `{
  // Settings of this site, checked by the server when you publish. Every key: ${ctx.apiUrl}/schemas/SpaceConfig.json
  "$schema": "${ctx.apiUrl}/schemas/SpaceConfig.json"
  // "cleanUrls": true,
  // "fallback": "/index.html"
}
`;
    fs4.writeFileSync(file, text);
    ctx.result({ path: file, schema: `${ctx.apiUrl}/schemas/SpaceConfig.json` }, () => `Wrote ${file}.`);
  },
  async link(ctx, [ref]) {
    const s = await space(ctx, ref);
    const prev = ctx.state.read();
    ctx.state.write({
      apiUrl: ctx.apiUrl,
      spaceId: s.id,
      slug: s.slug,
      liveUrl: s.liveUrl,
      teamId: s.teamId,
      ...prev?.spaceId === s.id && prev.spaceKey ? { spaceKey: prev.spaceKey, claimUrl: prev.claimUrl, expiresAt: prev.expiresAt } : {}
    });
    ctx.result(
      { spaceId: s.id, slug: s.slug, liveUrl: s.liveUrl, state: ctx.state.file },
      () => `Linked ${ctx.io.cwd} to ${s.slug} (${s.liveUrl}).`
    );
  },
  async unlink(ctx) {
    ctx.state.clear();
    ctx.result({ unlinked: true }, () => "Unlinked.");
  },
  async inspect(ctx, [ref]) {
    const s = await space(ctx, ref);
    ctx.result(
      s,
      () => [
        `${s.title} (${s.slug}, ${s.id})`,
        `  Live:      ${s.liveUrl}`,
        `  Team:      ${s.teamSlug ?? (s.anonymous ? "anonymous" : "-")}`,
        `  Status:    ${s.status}${s.disabled ? ` (disabled: ${s.disabled.reasonCode})` : ""}`,
        ...Object.entries(s.channels).map(([n, c]) => `  Channel:   ${n} \u2192 ${c.versionId} (${c.updatedAt})`),
        ...s.claimState?.expiresAt ? [`  Expires:   ${s.claimState.expiresAt} unless claimed`] : [],
        `  Settings:  ${s.config ? JSON.stringify(s.config) : "defaults"}`
      ].join("\n")
    );
  },
  async open(ctx, [ref]) {
    const linked = ctx.linked;
    const url = !ref && !ctx.opts.space && !ctx.io.env.SPACES_SPACE && linked ? linked.liveUrl : (await space(ctx, ref)).liveUrl;
    ctx.result({ url }, () => url);
    if (!ctx.json && ctx.io.stdout.isTTY) openBrowser(url);
  },
  async "versions.ls"(ctx, _a, o) {
    const ref = enc(ctx.spaceRef());
    const r = await ctx.spaceClient.request(
      "GET",
      `/v1/spaces/${ref}/versions`,
      { query: { limit: Number(o.limit) } }
    );
    ctx.result(r.data, () => r.data.length ? table(r.data.map(versionLine)) : "No versions yet.");
  },
  async "versions.get"(ctx, [v]) {
    const r = await ctx.spaceClient.request(
      "GET",
      `/v1/spaces/${enc(ctx.spaceRef())}/versions/${enc(v)}`
    );
    const x = r.data;
    ctx.result(
      x,
      () => [
        `v${x.number} ${x.id} \u2014 ${x.status} (${x.target})`,
        `  Files:     ${x.fileCount} (${x.totalBytes} bytes)`,
        `  Channels:  ${x.channels.join(", ") || "-"}`,
        `  URL:       ${x.immutableUrl}`,
        `  Created:   ${x.createdAt}${x.message ? `  \u201C${x.message}\u201D` : ""}`,
        ...x.diagnostics.map((d) => `  ${d.severity}: ${d.code} ${d.path ?? ""} ${d.message}`)
      ].join("\n")
    );
  },
  async "versions.rm"(ctx, [v]) {
    const ref = enc(ctx.spaceRef());
    await confirm(ctx, `Delete version ${v}?`);
    const r = await ctx.spaceClient.request(
      "DELETE",
      `/v1/spaces/${ref}/versions/${enc(v)}`
    );
    ctx.result(r.data, () => `Deleted v${r.data.number} (${r.data.id}).`);
  },
  async "versions.files"(ctx, [v]) {
    const ref = enc(ctx.spaceRef());
    const files = [];
    for await (const f of ctx.spaceClient.paginate(
      `/v1/spaces/${ref}/versions/${enc(v ?? "latest")}/files`
    ))
      files.push(f);
    ctx.result(files, () => table(files.map((f) => [String(f.size), f.sha256.slice(0, 12), f.path])));
  },
  async promote(ctx, [v], o) {
    const ref = enc(ctx.spaceRef());
    const r = await ctx.spaceClient.request(
      "POST",
      `/v1/spaces/${ref}/versions/${enc(v)}/promote`,
      {
        body: { channel: o.channel }
      }
    );
    ctx.result(
      r.data,
      () => `${r.data.channel} \u2192 v${r.data.version.number} (${r.data.versionId}); was ${r.data.previousVersionId ?? "nothing"}.`
    );
  },
  async rollback(ctx, [v], o) {
    const s = await space(ctx);
    const channel = o.channel;
    const target = v ?? await previousVersion(ctx, s.id, channel);
    const current = s.channels[channel]?.versionId ?? null;
    const r = await ctx.spaceClient.request(
      "POST",
      `/v1/spaces/${enc(s.id)}/versions/${enc(target)}/promote`,
      {
        body: { channel, expectedVersionId: current }
      }
    );
    ctx.result(
      { ...r.data, liveUrl: s.liveUrl },
      () => `Rolled ${channel} back to v${r.data.version.number} (${r.data.versionId}); was ${r.data.previousVersionId ?? "nothing"}.
  Live: ${s.liveUrl}`
    );
  },
  async "channels.ls"(ctx) {
    const r = await ctx.spaceClient.request(
      "GET",
      `/v1/spaces/${enc(ctx.spaceRef())}/channels`
    );
    ctx.result(
      r.data,
      () => r.data.length ? table(r.data.map((c) => [c.name, c.versionId, c.updatedAt])) : "No channels yet."
    );
  },
  async "channels.history"(ctx, [name], o) {
    const r = await ctx.spaceClient.request(
      "GET",
      `/v1/spaces/${enc(ctx.spaceRef())}/channels/${enc(name ?? "live")}/history`,
      { query: { limit: Number(o.limit) } }
    );
    ctx.result(
      r.data,
      () => table(
        r.data.map((m) => [
          m.createdAt,
          m.reason,
          `${m.previousVersionId ?? "-"} \u2192 ${m.versionId}`,
          m.actor ?? ""
        ])
      )
    );
  },
  async diff(ctx, [from, to]) {
    const r = await ctx.spaceClient.request(
      "GET",
      `/v1/spaces/${enc(ctx.spaceRef())}/versions/${enc(to)}/diff`,
      {
        query: { against: from }
      }
    );
    const d = r.data;
    ctx.result(
      d,
      () => [
        `${d.againstVersionId} \u2192 ${d.versionId}: ${d.added.length} added, ${d.changed.length} changed, ${d.removed.length} removed`,
        ...d.added.map((p) => `+ ${p}`),
        ...d.changed.map((p) => `~ ${p}`),
        ...d.removed.map((p) => `- ${p}`)
      ].join("\n")
    );
  },
  async download(ctx, _a, o) {
    const ref = enc(ctx.spaceRef());
    const out = path4.resolve(ctx.io.cwd, o.output);
    const res = await ctx.spaceClient.request(
      "GET",
      `/v1/spaces/${ref}/versions/${enc(o.version)}/archive`,
      {
        stream: true
      }
    );
    await fsp2.mkdir(out, { recursive: true });
    const written = [];
    let bytes = 0;
    const extract = tar2.extract();
    const done = new Promise((resolve, reject) => {
      extract.on("entry", (h, stream, next) => {
        const rel = h.type === "file" ? safeRelative(h.name) : null;
        if (!rel) {
          stream.resume();
          stream.on("end", next);
          return;
        }
        const dest = path4.join(out, rel);
        if (!dest.startsWith(out + path4.sep)) return reject(new Error(`unsafe path in archive: ${h.name}`));
        fs4.mkdirSync(path4.dirname(dest), { recursive: true });
        const w = fs4.createWriteStream(dest);
        stream.pipe(w);
        w.on("finish", () => {
          written.push(rel);
          bytes += h.size ?? 0;
          next();
        });
        w.on("error", reject);
      });
      extract.on("finish", resolve);
      extract.on("error", reject);
    });
    Readable2.fromWeb(res.body).pipe(zlib3.createGunzip()).on("error", (e) => extract.destroy(e)).pipe(extract);
    await done;
    ctx.result(
      { output: out, files: written.length, bytes },
      () => `Wrote ${written.length} files (${bytes} bytes) to ${out}.`
    );
  },
  async "spaces.ls"(ctx, _a, o) {
    ctx.requireToken();
    const r = await ctx.client.request("GET", "/v1/spaces", {
      query: { limit: Number(o.limit), team: ctx.opts.team ?? ctx.io.env.SPACES_TEAM }
    });
    ctx.result(
      r.data,
      () => r.data.length ? table(
        r.data.map((s) => [
          s.slug,
          s.id,
          s.teamSlug ?? "-",
          s.channels.live ? "live" : "empty",
          s.liveUrl
        ])
      ) : "No spaces."
    );
  },
  async "spaces.create"(ctx, _a, o) {
    ctx.requireToken();
    const r = await ctx.client.request("POST", "/v1/spaces", {
      body: { teamId: ctx.team, slug: o.slug, title: o.name }
    });
    const s = r.data.space;
    if (o.link)
      ctx.state.write({
        apiUrl: ctx.apiUrl,
        spaceId: s.id,
        slug: s.slug,
        liveUrl: s.liveUrl,
        teamId: s.teamId
      });
    ctx.result(r.data, () => `Created ${s.slug} (${s.id}): ${s.liveUrl}${o.link ? " \u2014 linked here" : ""}`);
  },
  async "spaces.rename"(ctx, [slug]) {
    const ref = ctx.spaceRef();
    const r = await ctx.spaceClient.request(
      "POST",
      `/v1/spaces/${enc(ref)}/rename`,
      { body: { slug } }
    );
    const s = r.data.space;
    const linked = ctx.linked;
    if (linked?.spaceId === s.id) ctx.state.write({ ...linked, slug: s.slug, liveUrl: s.liveUrl });
    ctx.result(r.data, () => `Renamed to ${s.slug}: ${s.liveUrl}`);
  },
  async "spaces.rm"(ctx, [ref]) {
    const s = await space(ctx, ref);
    await confirm(ctx, `Delete space ${s.slug} (${s.liveUrl})?`);
    const r = await ctx.spaceClient.request(
      "DELETE",
      `/v1/spaces/${enc(s.id)}`
    );
    if (ctx.linked?.spaceId === s.id) ctx.state.clear();
    ctx.result(r.data, () => `Deleted ${s.slug}.`);
  },
  async "spaces.claim"(ctx, _a, o) {
    const token = ctx.requireToken();
    const linked = ctx.linked;
    const key = o.key ?? linked?.spaceKey;
    if (!key)
      throw new UsageError(
        "No space key here: pass --key sfc_\u2026 (from the claim link) or run this where you published."
      );
    const r = await ctx.clientWith(token).request("POST", "/v1/claim", {
      body: { key, ...ctx.team ? { team: ctx.team } : {} }
    });
    const s = r.data.space;
    if (linked && (linked.spaceKey === key || linked.spaceId === s.id)) {
      ctx.state.write({
        apiUrl: linked.apiUrl,
        spaceId: s.id,
        slug: s.slug,
        liveUrl: s.liveUrl,
        teamId: s.teamId
      });
    }
    ctx.result(r.data, () => `Claimed ${s.slug} into ${s.teamSlug ?? "your team"}: ${s.liveUrl}`);
  },
  async "teams.ls"(ctx) {
    ctx.requireToken();
    const r = await ctx.client.request("GET", "/v1/teams", {
      query: { limit: 100 }
    });
    const cur = ctx.team;
    ctx.result(
      r.data,
      () => table(r.data.map((t) => [t.slug === cur || t.id === cur ? "*" : " ", t.slug, t.id, t.role, t.name]))
    );
  },
  async "teams.create"(ctx, [name], o) {
    ctx.requireToken();
    const body = {
      name,
      ...o.slug ? { slug: o.slug } : {}
    };
    const r = await ctx.client.request("POST", "/v1/teams", { body });
    ctx.result(
      r.data,
      () => `Created team ${r.data.slug} (${r.data.id}). \`spaces switch ${r.data.slug}\` makes it the default.`
    );
  },
  async "teams.members"(ctx, [team]) {
    ctx.requireToken();
    const t = team ?? ctx.team;
    if (!t) throw new UsageError("Which team? Pass it, or --team, or `spaces switch TEAM`.");
    const r = await ctx.client.request(
      "GET",
      `/v1/teams/${enc(t)}/members`,
      { query: { limit: 100 } }
    );
    ctx.result(
      r.data,
      () => table(r.data.map((m) => Object.values(m).filter((v) => typeof v === "string")))
    );
  },
  async "teams.invite"(ctx, [email], o) {
    ctx.requireToken();
    const t = ctx.team;
    if (!t) throw new UsageError("Which team? Pass --team or run `spaces switch TEAM`.");
    const body = { email, role: o.role };
    const r = await ctx.client.request(
      "POST",
      `/v1/teams/${enc(t)}/invitations`,
      { body }
    );
    ctx.result(r.data, () => `Invited ${email} to ${t} as ${o.role}.`);
  },
  async "api-keys.create"(ctx, [name], o) {
    ctx.requireToken();
    const body = {
      name,
      ...ctx.team ? { team: ctx.team } : {},
      ...o.preset ? { preset: o.preset } : {},
      ...o.expiresAt ? { expiresAt: o.expiresAt } : {}
    };
    const r = await ctx.client.request("POST", "/v1/account/api-keys", {
      body
    });
    ctx.result(
      r.data,
      () => `${r.data.token}

Created key ${r.data.id} (${r.data.preset}). This is the only time it is shown.`
    );
  },
  async "api-keys.ls"(ctx) {
    ctx.requireToken();
    const r = await ctx.client.request("GET", "/v1/account/api-keys", {
      query: { limit: 100 }
    });
    ctx.result(
      r.data,
      () => table(
        r.data.map((k) => [
          k.id,
          k.name,
          k.preset,
          `\u2026${k.hint}`,
          k.revokedAt ? "revoked" : k.expiresAt ?? "no expiry"
        ])
      )
    );
  },
  async "api-keys.revoke"(ctx, [id]) {
    ctx.requireToken();
    await ctx.client.request("DELETE", `/v1/account/api-keys/${enc(id)}`);
    ctx.result({ id, revoked: true }, () => `Revoked ${id}.`);
  },
  async "vars.ls"(ctx) {
    const r = await ctx.spaceClient.request(
      "GET",
      `/v1/spaces/${enc(ctx.spaceRef())}/variables`
    );
    ctx.result(
      r.data,
      () => r.data.length ? table(r.data.map((v) => [v.name, v.secret ? "(secret)" : v.value ?? ""])) : "No variables."
    );
  },
  async "vars.set"(ctx, [name, value], o) {
    const ref = enc(ctx.spaceRef());
    let v = value;
    if (v === void 0) {
      if (ctx.io.stdin.isTTY) ctx.err(`Value for ${name} (not echoed; end with Ctrl-D):`);
      v = (await readStdin(ctx)).replace(/\r?\n$/, "");
    }
    const body = { value: v, secret: Boolean(o.secret) };
    const r = await ctx.spaceClient.request(
      "PUT",
      `/v1/spaces/${ref}/variables/${enc(name)}`,
      { body }
    );
    ctx.result(r.data, () => `Set ${name}${r.data.secret ? " (secret)" : ""}.`);
  },
  async "vars.rm"(ctx, [name]) {
    await ctx.spaceClient.request("DELETE", `/v1/spaces/${enc(ctx.spaceRef())}/variables/${enc(name)}`);
    ctx.result({ name, deleted: true }, () => `Deleted ${name}.`);
  },
  async operations(ctx, _a, o) {
    const r = await ctx.spaceClient.request(
      "GET",
      `/v1/spaces/${enc(ctx.spaceRef())}/operations`,
      {
        query: { limit: Number(o.limit) }
      }
    );
    ctx.result(r.data, () => table(r.data.map((x) => [x.createdAt, x.id, x.kind, x.status])));
  },
  async api(ctx, [method, p], o) {
    const m = method.toUpperCase();
    let raw;
    if (o.input === "-") raw = Buffer.from(await readStdin(ctx));
    else if (typeof o.input === "string") {
      if (!o.input.startsWith("@")) throw new UsageError("--input takes @file or - (stdin).");
      raw = await fsp2.readFile(path4.resolve(ctx.io.cwd, o.input.slice(1)));
    }
    const idempotencyKey = o.idempotencyKey;
    if (o.paginate) {
      if (m !== "GET") throw new UsageError("--paginate works with GET.");
      const [pathPart, qs] = p.split("?");
      const query = Object.fromEntries(new URLSearchParams(qs ?? ""));
      for await (const item of ctx.client.paginate(pathPart, query)) ctx.writeJsonLine(item);
      return;
    }
    const res = await ctx.client.request(m, p, {
      ...raw ? { raw: new Uint8Array(raw), contentType: "application/json" } : {},
      idempotencyKey,
      stream: true
    });
    const text = await res.text();
    ctx.io.stdout.write(text.endsWith("\n") || text === "" ? text : `${text}
`);
  },
  async docs(ctx, [words]) {
    const q = (words ?? []).join(" ");
    const r = await ctx.client.request("GET", "/v1/docs", {
      query: q ? { q } : {}
    });
    ctx.result(
      r.data,
      () => r.data.map(
        (d) => `${d.title ?? d.slug}${d.url ? `  ${d.url}` : ""}${d.summary ? `
  ${d.summary}` : ""}`
      ).join("\n") || "No matches."
    );
  },
  async completion(ctx, [shell]) {
    ctx.io.stdout.write(completionScript(definitions(), shell));
  }
};

// src/cli/context.ts
import ora from "ora";
var Progress = class {
  constructor(ctx) {
    this.ctx = ctx;
  }
  ctx;
  spinner = null;
  event(name, fields, text) {
    if (this.ctx.streaming) this.ctx.writeJsonLine({ event: name, ...fields });
    else if (text && this.ctx.interactive) {
      if (!this.spinner)
        this.spinner = ora({ text, stream: this.ctx.io.stderr }).start();
      else this.spinner.text = text;
    }
  }
  succeed(text) {
    if (this.spinner) this.spinner.succeed(text);
    this.spinner = null;
  }
  stop() {
    this.spinner?.stop();
    this.spinner = null;
  }
};
var Context = class {
  constructor(opts, io) {
    this.opts = opts;
    this.io = io;
    this.configStore = new ConfigStore(io.env);
    this.state = new StateStore(io.cwd);
  }
  opts;
  io;
  configStore;
  state;
  get json() {
    return Boolean(this.opts.json);
  }
  get streaming() {
    return Boolean(this.opts.json && this.opts.stream);
  }
  progresses = /* @__PURE__ */ new Set();
  /** Spinners only for a person at a real terminal (a pty without a size would make ora misdraw). */
  get interactive() {
    const err = this.io.stderr;
    return !this.json && Boolean(err.isTTY) && (err.columns ?? 0) > 0 && !this.io.env.CI;
  }
  stopProgress() {
    for (const p of this.progresses) p.stop();
  }
  get profileName() {
    return this.opts.profile || this.io.env.SPACES_PROFILE || this.configStore.read().currentProfile || "default";
  }
  get profile() {
    return this.configStore.read().profiles[this.profileName];
  }
  get apiUrl() {
    return (this.opts.apiUrl || this.io.env.SPACES_API_URL || this.profile?.apiUrl || DEFAULT_API_URL).replace(/\/+$/, "");
  }
  /** The person's credential: flag, environment, then profile (only when it is for this API URL). */
  get token() {
    if (this.opts.token) return this.opts.token;
    if (this.io.env.SPACES_TOKEN) return this.io.env.SPACES_TOKEN;
    const p = this.profile;
    if (p?.token && p.apiUrl.replace(/\/+$/, "") === this.apiUrl) return p.token;
    return void 0;
  }
  get team() {
    return this.opts.team || this.io.env.SPACES_TEAM || this.profile?.team;
  }
  /** The linked project's state when it belongs to this API URL. */
  get linked() {
    const s = this.state.read();
    return s && s.apiUrl === this.apiUrl ? s : null;
  }
  _client = null;
  get client() {
    if (!this._client) {
      this._client = new ApiClient({ apiUrl: this.apiUrl, token: this.credentialForLinkedSpace() });
    }
    return this._client;
  }
  /** Without a person's credential, a linked anonymous space is reached with its space key. */
  credentialForLinkedSpace() {
    return this.token ?? this.linked?.spaceKey;
  }
  /**
   * For commands on the linked space: an anonymous space is reachable only with its own key (a
   * person's credential can't see it until it is claimed), so that key wins while it is kept.
   */
  get spaceClient() {
    const linked = this.linked;
    const explicit = this.opts.space || this.io.env.SPACES_SPACE;
    if (linked?.spaceKey && (!explicit || normaliseSpaceRef(explicit) === linked.spaceId || normaliseSpaceRef(explicit) === linked.slug)) {
      return this.clientWith(linked.spaceKey);
    }
    return this.client;
  }
  clientWith(token) {
    return new ApiClient({ apiUrl: this.apiUrl, token });
  }
  requireToken() {
    const t = this.token;
    if (!t) {
      throw new ApiProblem({
        type: "about:blank",
        title: "Not logged in",
        status: 401,
        code: "unauthorized",
        detail: `No credential for ${this.apiUrl}.`,
        requestId: "",
        suggestions: ["Run `spaces login` (or `spaces login --token <key>`), or set SPACES_TOKEN."]
      });
    }
    return t;
  }
  /** The space ref the command acts on: --space / SPACES_SPACE (id, slug or live URL), else the link. */
  spaceRef(explicit) {
    const raw = explicit || this.opts.space || this.io.env.SPACES_SPACE;
    if (raw) return normaliseSpaceRef(raw);
    const linked = this.linked;
    if (linked) return linked.spaceId;
    throw new UsageError(
      "No space given: pass --space <id|slug|url>, set SPACES_SPACE, or run `spaces link`."
    );
  }
  out(text) {
    if (!this.json) this.io.stdout.write(text.endsWith("\n") ? text : `${text}
`);
  }
  err(text) {
    this.io.stderr.write(text.endsWith("\n") ? text : `${text}
`);
  }
  writeJsonLine(value) {
    this.io.stdout.write(`${JSON.stringify(value)}
`);
  }
  /** The command's result: JSON on stdout with --json (a `result` event when streaming), else text. */
  result(value, human2) {
    if (this.streaming) this.writeJsonLine({ event: "result", data: value });
    else if (this.json) this.io.stdout.write(`${JSON.stringify(value, null, 2)}
`);
    else {
      const text = human2();
      if (text) this.out(text);
    }
  }
  progress() {
    return new Progress(this);
  }
};
function normaliseSpaceRef(raw) {
  if (/^https?:\/\//i.test(raw)) {
    try {
      return new URL(raw).hostname.split(".")[0] ?? raw;
    } catch {
      return raw;
    }
  }
  return raw;
}
function formatProblem(p) {
  const lines = [`Error: ${p.title}${p.status ? ` (${p.status})` : ""}`];
  if (p.detail) lines.push(`  ${p.detail}`);
  if (p.pointer) lines.push(`  at: ${p.pointer}`);
  lines.push(`  code: ${p.code}`);
  const diagnostics = p.details?.diagnostics;
  if (Array.isArray(diagnostics)) {
    for (const d of diagnostics.slice(0, 50)) {
      const where = d.path ? ` ${String(d.path)}:` : "";
      lines.push(
        `  ${String(d.severity ?? "error")}:${where} ${String(d.message ?? "")} (${String(d.code ?? "")})`
      );
      if (d.fix) lines.push(`    fix: ${String(d.fix)}`);
    }
  }
  const paths = p.details?.paths;
  if (Array.isArray(paths)) {
    for (const x of paths.slice(0, 20)) lines.push(`  - ${String(x)}`);
    if (paths.length > 20) lines.push(`  \u2026 and ${paths.length - 20} more`);
  }
  if (p.requestId) lines.push(`  request id: ${p.requestId}`);
  for (const s of p.suggestions ?? []) lines.push(`  hint: ${s}`);
  for (const n of p.next ?? []) lines.push(`  next: ${n}`);
  return `${lines.join("\n")}
`;
}
var EXIT = { ok: 0, error: 1, usage: 2, auth: 3, notFound: 4, conflict: 5, limit: 6 };
function exitCodeOf(p) {
  const s = p.status;
  if (s === 401 || s === 403) return EXIT.auth;
  if (s === 404 || s === 410) return EXIT.notFound;
  if (s === 409 || s === 412) return EXIT.conflict;
  if (s === 429 || s === 413 || s === 402) return EXIT.limit;
  if (/(_limit_|_exceeded$|_too_large$|_quota_|rate_limited)/.test(p.code)) return EXIT.limit;
  return EXIT.error;
}

// src/cli/main.ts
var Exit = class extends Error {
  constructor(code) {
    super(`exit ${code}`);
    this.code = code;
  }
  code;
};
async function runCli(argv, io = {}) {
  const full = {
    stdout: io.stdout ?? process.stdout,
    stderr: io.stderr ?? process.stderr,
    stdin: io.stdin ?? process.stdin,
    env: io.env ?? process.env,
    cwd: io.cwd ?? process.cwd()
  };
  const wantsJson = argv.includes("--json");
  let ctx = null;
  const run = (action) => async (...args) => {
    const cmd = args[args.length - 1];
    const opts = args[args.length - 2];
    const positional = args.slice(0, -2);
    ctx = new Context(cmd.optsWithGlobals(), full);
    if (ctx.opts.stream && !ctx.opts.json) throw new UsageError("--stream needs --json.");
    await action(ctx, positional, opts);
  };
  const program = buildProgram(run, actions);
  const configure = (cmd) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeOut: (s) => full.stdout.write(s),
      writeErr: (s) => full.stderr.write(s)
    });
    for (const sub of cmd.commands) configure(sub);
  };
  configure(program);
  const fail = (code2, problem) => {
    if (wantsJson)
      full.stdout.write(`${JSON.stringify({ type: "about:blank", status: 0, requestId: "", ...problem })}
`);
    return code2;
  };
  let code = EXIT.ok;
  try {
    if (argv.length === 1 && (argv[0] === "-V" || argv[0] === "--version")) {
      full.stdout.write(`${CLI_VERSION}
`);
      return EXIT.ok;
    }
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT.ok;
    }
    await program.parseAsync(argv, { from: "user" });
  } catch (err) {
    ctx?.stopProgress();
    if (err instanceof Exit) code = err.code;
    else if (err instanceof CommanderError) {
      if (err.exitCode === 0 || err.code === "commander.helpDisplayed" || err.code === "commander.version")
        code = EXIT.ok;
      else
        code = fail(EXIT.usage, {
          title: "Usage error",
          detail: err.message.replace(/^error: /, ""),
          code: "usage_error"
        });
    } else if (err instanceof UsageError) {
      full.stderr.write(`spaces: ${err.message}
`);
      code = fail(EXIT.usage, { title: "Usage error", detail: err.message, code: "usage_error" });
    } else if (err instanceof ApiProblem) {
      const c = ctx;
      if (c?.json || wantsJson) full.stdout.write(`${JSON.stringify(err.problem, null, 2)}
`);
      else full.stderr.write(formatProblem(err.problem));
      code = exitCodeOf(err.problem);
    } else {
      full.stderr.write(`spaces: ${err?.stack ?? String(err)}
`);
      code = fail(EXIT.error, {
        title: "Internal error",
        detail: String(err?.message ?? err),
        code: "cli_error"
      });
    }
  }
  return code;
}
export {
  runCli
};
//# sourceMappingURL=cli.mjs.map
