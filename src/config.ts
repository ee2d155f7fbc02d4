// Long file: every setting of the server in one place — the table of variables and flags (which the
// README, the self-hosting guide and `spaces server --help` are checked against), their parsing and
// their validation, so a setting is added, documented and checked in one file.
import fs from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { DEFAULT_INLINE_BLOB_BYTES, MAX_INLINE_BLOB_BYTES } from './blobs/inline.ts';
import { DEFAULT_API_URL } from './cli/store.ts';
import { isEmailAddress } from './domain/accounts/email.ts';
import { type Rfc2136Options, TSIG_ALGORITHMS, type TsigAlgorithm } from './domain/domains/rfc2136.ts';
import { type OutboundPolicy, parseOutboundPolicy } from './net/outbound.ts';
import { parseTrustedHeaders } from './serve/visitor.ts';

/**
 * The whole configuration of a Spaces server, read from environment variables and `--flags`,
 * validated once at start. Every other module receives a `Config`; nothing reads `process.env` itself.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** `sqlite:<file>` or `postgres://…`. */
  databaseUrl: string;
  /** The API origin used in absolute URLs, without a trailing slash. */
  publicUrl: string;
  /** True when the public URL was not given: it follows the port actually bound (port 0 in tests). */
  publicUrlFromPort: boolean;
  /** Sites answer at `<name>.<baseDomain>`. */
  baseDomain: string;
  /** Scheme and port suffix used in site URLs (`http`, `:8080`), derived from the public URL unless set. */
  siteScheme: 'http' | 'https';
  sitePortSuffix: string;
  bootstrapToken: string | null;
  ownerEmail: string;
  signup: 'open' | 'closed';
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `file://<dir>` (default: `<dataDir>/blobs`) or `s3://bucket/prefix?endpoint=…&region=…`. */
  blobUrl: string;
  /** Blobs up to this many bytes are stored in the database rather than the blob store (0: none). */
  inlineBlobBytes: number;
  /**
   * Memory the site edge's in-process caches may hold together (bytes): file bodies, host answers,
   * version manifests, rules and routing answers, each an LRU with its share (see serve/budget.ts).
   */
  cacheBytes: number;
  /** 32+ byte secret used to encrypt secret variables; read from the data dir when not given. */
  secretKey: string | null;
  /** Upper bound for any request body the API accepts as one document (bytes). */
  bodyLimit: number;
  limits: Limits;
  /** Limits for anonymous (unclaimed) spaces. */
  anonymous: AnonymousConfig;
  /** Proxy rewrites may reach these otherwise-refused addresses (`SPACES_PROXY_ALLOW`, raw list). */
  proxyAllow: string;
  /** Webhook targets allowed although private, and whether `http:` is (`SPACES_WEBHOOK_ALLOW`). */
  webhookAllow: OutboundPolicy;
  /** DNS servers (`ip` or `ip:port`) that domain checks ask; empty: the system's resolvers. */
  dnsServers: string[];
  /** The hostname custom domains point a CNAME at; null: the bound space's managed hostname. */
  domainTarget: string | null;
  /** The addresses apex domains point A/AAAA records at (this server's public addresses). */
  domainAddresses: string[];
  /** The HTTPS listener's port (0: any free one), or null: no HTTPS and no certificates. */
  httpsPort: number | null;
  /** `:<port>` of the HTTPS listener in URLs (empty for 443); set once it listens. */
  httpsPortSuffix: string;
  /** The ACME directory certificates come from. */
  acmeDirectory: string;
  /** The contact address given to the ACME CA, or null. */
  acmeEmail: string | null;
  /** Extra trust (PEM file) for a private ACME server's own TLS, e.g. pebble's; or null. */
  acmeCaFile: string | null;
  /** Certificate and key files (PEM) presented for every other name, e.g. a wildcard for the base domain. */
  tlsCert: string | null;
  tlsKey: string | null;
  /**
   * The DNS provider DNS-01 orders write `_acme-challenge` TXT values through (wildcard domains, the
   * base domain's wildcard): RFC 2136 dynamic update signed with a TSIG key; null when not configured.
   */
  rfc2136: Rfc2136Options | null;
  /** Whether the HTTPS listener offers HTTP/2 by ALPN (HTTP/1.1 stays for clients that don't). */
  http2: boolean;
  /** Peers whose `X-Forwarded-For`/`X-Forwarded-Proto` are believed (CIDRs). */
  trustedProxies: string[];
  /** MaxMind-format database for visitor country/ASN, or null. */
  geoipDb: string | null;
  /** `country=<header>,asn=<header>,ja3=<header>,ja4=<header>` set by a trusted proxy. */
  trustedProxyHeaders: string;
  /** The edge's access log (`SPACES_ACCESS_LOG`) and how many days its lines are kept. */
  accessLog: { enabled: boolean; retentionDays: number };
  /** Whether this process runs background jobs (`SPACES_WORKER=off` for API-only scale-out roles). */
  worker: boolean;
  /** Builds: how many run at once per worker, their default wall-clock limit, what git may clone from. */
  builds: {
    concurrency: number;
    timeoutSeconds: number;
    /** Sources beyond public https a clone may use: `file`, `loopback`, `private`, `http` (tests). */
    gitAllow: ReadonlySet<string>;
  };
  /** How often an idle job worker looks for due jobs (ms). */
  jobPollMs: number;
  /**
   * Space thumbnails (issue 23): `auto` renders them in headless Chromium when `chromiumPath` exists,
   * `off` never; `thumbnailTimeoutMs` bounds one rendering.
   */
  thumbnails: 'auto' | 'off';
  chromiumPath: string;
  thumbnailTimeoutMs: number;
  /** Functions (issue 26): wall-clock limit per request, idle time before a workerd process stops (ms). */
  functionsTimeoutMs: number;
  functionsIdleMs: number;
  /**
   * Several instances: the base URL the other instances reach this one at, for calls on the space
   * databases it owns (`SPACES_INSTANCE_URL`; null: `http://127.0.0.1:<port>` of its own listener).
   */
  instanceUrl: string | null;
  /** How long an instance's ownership of a space database lasts unless renewed (ms). */
  spaceDbLeaseMs: number;
  /** How long a stopping server may take before it exits anyway (ms; `SPACES_SHUTDOWN_TIMEOUT` is seconds). */
  shutdownTimeoutMs: number;
  /** How long SIGTERM keeps serving with `/readyz` at 503 before closing (ms; `SPACES_DRAIN_SECONDS`). */
  drainMs: number;
  /** Bearer token for `GET /metrics` from anywhere; null: only loopback clients may read it. */
  metricsToken: string | null;
  /** Where the service's e-mail goes (`SPACES_MAIL`) and its `From` (`SPACES_MAIL_FROM`). */
  mail: MailSettings;
}

/** `file`: `.eml` files in `dir` (and a log line each); `log`: the whole message in the log; `smtp`: a server. */
export type MailSettings =
  | { transport: 'file'; dir: string; from: string }
  | { transport: 'log'; from: string }
  | { transport: 'smtp'; url: string; from: string };

export interface AnonymousConfig {
  enabled: boolean;
  maxFileBytes: number;
  maxFilesPerVersion: number;
  maxVersionBytes: number;
  publishesPerHourPerIp: number;
  liveSpacesPerIp: number;
}

export interface Limits {
  maxFileBytes: number;
  maxFilesPerVersion: number;
  maxVersionBytes: number;
  maxManifestBytes: number;
}

/** Let's Encrypt's production ACME directory, the default CA. */
const LETS_ENCRYPT = 'https://acme-v02.api.letsencrypt.org/directory';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

/** The configuration does not fit the data it meets at start-up (e.g. another instance's secret key). */
export class StartupError extends Error {}

interface Spec {
  env: string;
  flag: string;
  description: string;
  default: string;
}

/** One table drives parsing, `--help` and the README's configuration table. */
export const configSpec: Spec[] = [
  { env: 'PORT', flag: 'port', description: 'TCP port for the API and the sites', default: '8080' },
  { env: 'HOST', flag: 'host', description: 'Interface to listen on', default: '0.0.0.0' },
  {
    env: 'SPACES_DATA_DIR',
    flag: 'data-dir',
    description: 'Directory for the SQLite file, blobs and secrets',
    default: './data',
  },
  {
    env: 'SPACES_DATABASE_URL',
    flag: 'database-url',
    description: '`postgres://…` selects PostgreSQL; default is `sqlite:<data dir>/spaces.db`',
    default: '',
  },
  {
    env: 'SPACES_PUBLIC_URL',
    flag: 'public-url',
    description: 'API origin used in absolute URLs (links, `$schema`, problem `type`)',
    default: 'http://localhost:<PORT>',
  },
  {
    env: 'SPACES_BASE_DOMAIN',
    flag: 'base-domain',
    description: 'Sites answer at `<name>.<base domain>`',
    default: 'localhost',
  },
  {
    env: 'SPACES_SITE_URL',
    flag: 'site-url',
    description:
      'Scheme and port of site URLs, e.g. `https://` or `http://:8080`; default from the public URL',
    default: '',
  },
  {
    env: 'SPACES_BOOTSTRAP_TOKEN',
    flag: 'bootstrap-token',
    description: 'On first start, becomes the owner’s API key (`sfa_` + ≥128 bits)',
    default: '',
  },
  {
    env: 'SPACES_OWNER_EMAIL',
    flag: 'owner-email',
    description: 'E-mail of the owner account created on first start',
    default: 'owner@localhost',
  },
  {
    env: 'SPACES_SIGNUP',
    flag: 'signup',
    description: '`open` lets anyone sign up, `closed` only the owner creates users',
    default: 'closed',
  },
  {
    env: 'SPACES_LOG_LEVEL',
    flag: 'log-level',
    description: 'fatal, error, warn, info, debug, trace or silent',
    default: 'info',
  },
  {
    env: 'SPACES_BLOB_URL',
    flag: 'blob-url',
    description: '`file://<dir>` or `s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=true`',
    default: 'file://<data dir>/blobs',
  },
  {
    env: 'SPACES_INLINE_BLOB_BYTES',
    flag: 'inline-blob-bytes',
    description:
      'Files (and compressed variants) up to this size are stored in the database, not as blob files/objects; 0 turns it off',
    default: '16384',
  },
  {
    env: 'SPACES_CACHE_BYTES',
    flag: 'cache-bytes',
    description:
      'Memory for the site caches together (file bodies, hostnames, versions, rules), each an LRU with a share of it; 0 turns them off',
    default: '268435456',
  },
  {
    env: 'SPACES_SECRET_KEY',
    flag: 'secret-key',
    description: 'Key for encrypting secrets at rest (≥32 chars); default: generated into the data dir',
    default: '',
  },
  {
    env: 'SPACES_BODY_LIMIT',
    flag: 'body-limit',
    description: 'Largest JSON/form body in bytes',
    default: '16777216',
  },
  {
    env: 'SPACES_MAX_FILE_BYTES',
    flag: 'max-file-bytes',
    description: 'Largest file in a version',
    default: '104857600',
  },
  { env: 'SPACES_MAX_FILES', flag: 'max-files', description: 'Most files in a version', default: '20000' },
  {
    env: 'SPACES_MAX_VERSION_BYTES',
    flag: 'max-version-bytes',
    description: 'Largest total size of a version',
    default: '1073741824',
  },
  {
    env: 'SPACES_MAX_MANIFEST_BYTES',
    flag: 'max-manifest-bytes',
    description: 'Largest manifest body',
    default: '16000000',
  },
  {
    env: 'SPACES_ACCESS_LOG',
    flag: 'access-log',
    description: '`off` stops recording site requests (access logs, analytics)',
    default: 'on',
  },
  {
    env: 'SPACES_ACCESS_LOG_RETENTION_DAYS',
    flag: 'access-log-retention-days',
    description: 'Days raw access log lines are kept',
    default: '30',
  },
  {
    env: 'SPACES_WORKER',
    flag: 'worker',
    description: '`on` runs background jobs in this process; `off` for API-only instances',
    default: 'on',
  },
  {
    env: 'SPACES_JOB_POLL_MS',
    flag: 'job-poll-ms',
    description: 'How often an idle job worker looks for due jobs, in milliseconds',
    default: '1000',
  },
  {
    env: 'SPACES_THUMBNAILS',
    flag: 'thumbnails',
    description:
      'Space thumbnails: `auto` renders each newly live front page at 1280×800 in headless Chromium when `SPACES_CHROMIUM_PATH` exists; `off` never',
    default: 'auto',
  },
  {
    env: 'SPACES_CHROMIUM_PATH',
    flag: 'chromium-path',
    description: 'The Chromium binary thumbnails are rendered with (Debian’s `chromium` package)',
    default: '/usr/bin/chromium',
  },
  {
    env: 'SPACES_FUNCTIONS_TIMEOUT_MS',
    flag: 'functions-timeout-ms',
    description:
      'Wall-clock limit of one request to a site’s functions, in milliseconds: past it the request answers 504 and its workerd process is restarted',
    default: '30000',
  },
  {
    env: 'SPACES_FUNCTIONS_IDLE_MS',
    flag: 'functions-idle-ms',
    description: 'How long a version’s workerd process may sit idle before it is stopped, in milliseconds',
    default: '300000',
  },
  {
    env: 'SPACES_INSTANCE_URL',
    flag: 'instance-url',
    description:
      'Several instances on PostgreSQL: the base URL the other instances reach this one at (space databases it owns are served there)',
    default: 'http://127.0.0.1:<port>',
  },
  {
    env: 'SPACES_SPACE_DB_LEASE_MS',
    flag: 'space-db-lease-ms',
    description:
      'Several instances: how long an instance owns a space database unless it renews (another takes over after it stops renewing)',
    default: '30000',
  },
  {
    env: 'SPACES_THUMBNAIL_TIMEOUT_MS',
    flag: 'thumbnail-timeout-ms',
    description: 'Longest one thumbnail may take to render, in milliseconds (then it is recorded as failed)',
    default: '20000',
  },
  {
    env: 'SPACES_BUILD_CONCURRENCY',
    flag: 'build-concurrency',
    description: 'Builds one worker runs at once',
    default: '1',
  },
  {
    env: 'SPACES_BUILD_TIMEOUT',
    flag: 'build-timeout',
    description:
      'Default wall-clock limit of a build in seconds (a space’s `build.timeoutSeconds` overrides it)',
    default: '900',
  },
  {
    env: 'SPACES_GIT_ALLOW',
    flag: 'git-allow',
    description:
      'Git sources a build may clone beyond public `https`: a comma list of `file`, `loopback`, `private`, `http` (empty refuses them all)',
    default: '',
  },
  {
    env: 'SPACES_SHUTDOWN_TIMEOUT',
    flag: 'shutdown-timeout',
    description:
      'Seconds a stopping server (SIGTERM/SIGINT) may take to finish requests and jobs before it exits anyway',
    default: '10',
  },
  {
    env: 'SPACES_DRAIN_SECONDS',
    flag: 'drain-seconds',
    description:
      'Seconds a server keeps serving after SIGTERM with `/readyz` answering 503, so load balancers take it out of rotation before it closes (SIGINT skips this); the shutdown timeout starts after it',
    default: '3',
  },
  {
    env: 'SPACES_METRICS_TOKEN',
    flag: 'metrics-token',
    description:
      'Bearer token (≥16 chars) that lets a scraper read `GET /metrics` (Prometheus text) from any address; without it only loopback clients may',
    default: '',
  },
  {
    env: 'SPACES_MAIL',
    flag: 'mail',
    description:
      'Where e-mail (invitations) goes: `file` writes each message as an `.eml` file under `<data dir>/mail` and logs where, `file:<dir>` elsewhere, `log` prints whole messages in the log, `smtp://user:pass@host:587` or `smtps://…:465` sends through an SMTP server',
    default: 'file',
  },
  {
    env: 'SPACES_MAIL_FROM',
    flag: 'mail-from',
    description: "The `From` of the service's e-mail, e.g. `Spaces <spaces@example.com>`",
    default: 'Spaces <no-reply@<public URL host>>',
  },
  {
    env: 'SPACES_PROXY_ALLOW',
    flag: 'proxy-allow',
    description:
      'Comma-separated CIDRs or host:port that proxy rewrites may reach although private (everything private, loopback, link-local and metadata is refused otherwise)',
    default: '',
  },
  {
    env: 'SPACES_WEBHOOK_ALLOW',
    flag: 'webhook-allow',
    description:
      'Comma-separated CIDRs or host:port that webhook deliveries may reach although private, and `http` to allow plain-HTTP targets (only public https is allowed otherwise)',
    default: '',
  },
  {
    env: 'SPACES_DNS_SERVERS',
    flag: 'dns-servers',
    description:
      'Comma-separated DNS servers (`ip` or `ip:port`, `[v6]:port`) that custom-domain checks ask; empty uses the system resolvers',
    default: '',
  },
  {
    env: 'SPACES_DOMAIN_TARGET',
    flag: 'domain-target',
    description:
      "The hostname custom domains point a CNAME at (e.g. a load balancer's name); empty: each domain's bound space's own hostname",
    default: '',
  },
  {
    env: 'SPACES_DOMAIN_ADDRESSES',
    flag: 'domain-addresses',
    description:
      'Comma-separated public IPv4/IPv6 addresses of this server, which apex custom domains point A/AAAA records at',
    default: '',
  },
  {
    env: 'SPACES_HTTPS_PORT',
    flag: 'https-port',
    description:
      'Serve HTTPS on this port too, with certificates obtained for verified custom domains (chosen by SNI); empty: no HTTPS',
    default: '',
  },
  {
    env: 'SPACES_ACME_DIRECTORY',
    flag: 'acme-directory',
    description:
      "The ACME directory URL certificates come from (Let's Encrypt's staging or a private CA by URL)",
    default: LETS_ENCRYPT,
  },
  {
    env: 'SPACES_ACME_EMAIL',
    flag: 'acme-email',
    description: 'Contact address registered with the ACME CA (expiry notices)',
    default: '',
  },
  {
    env: 'SPACES_ACME_CA_FILE',
    flag: 'acme-ca-file',
    description:
      "PEM file trusted for the ACME server's own TLS (a private CA such as pebble), besides the system store",
    default: '',
  },
  {
    env: 'SPACES_TLS_CERT',
    flag: 'tls-cert',
    description:
      'PEM certificate (chain) the HTTPS listener presents for names without a certificate of their own, e.g. a wildcard for the base domain; with SPACES_TLS_KEY',
    default: '',
  },
  {
    env: 'SPACES_TLS_KEY',
    flag: 'tls-key',
    description: 'PEM private key of SPACES_TLS_CERT',
    default: '',
  },
  {
    env: 'SPACES_RFC2136_SERVER',
    flag: 'rfc2136-server',
    description:
      'DNS primary (`host` or `host:port`, port 53 by default) that accepts RFC 2136 dynamic updates: enables DNS-01 certificates (wildcard domains, and `*.<base domain>`); with the other SPACES_RFC2136_* settings',
    default: '',
  },
  {
    env: 'SPACES_RFC2136_ZONE',
    flag: 'rfc2136-zone',
    description:
      'Comma-separated zones the TSIG key may update; `_acme-challenge` names outside them are delegated with a CNAME into the first',
    default: '',
  },
  {
    env: 'SPACES_RFC2136_KEY_NAME',
    flag: 'rfc2136-key-name',
    description: 'Name of the TSIG key that signs the updates, as the DNS server knows it',
    default: '',
  },
  {
    env: 'SPACES_RFC2136_KEY_ALGORITHM',
    flag: 'rfc2136-key-algorithm',
    description:
      'TSIG algorithm: `hmac-sha256`, `hmac-sha512`, `hmac-sha384`, `hmac-sha224`, `hmac-sha1` or `hmac-md5`',
    default: 'hmac-sha256',
  },
  {
    env: 'SPACES_RFC2136_KEY_SECRET',
    flag: 'rfc2136-key-secret',
    description: 'The TSIG key\'s shared secret, base64 (as in BIND\'s `key { secret "…"; }`)',
    default: '',
  },
  {
    env: 'SPACES_HTTP2',
    flag: 'http2',
    description:
      'Offer HTTP/2 by ALPN on the HTTPS listener (`on` or `off`); off by default, since Node’s HTTP/2 costs several times the CPU per request of its HTTP/1.1 path',
    default: 'off',
  },
  {
    env: 'SPACES_TRUSTED_PROXIES',
    flag: 'trusted-proxies',
    description:
      "Addresses or CIDRs of load balancers whose X-Forwarded-For / X-Forwarded-Proto are believed: the client is then the rightmost X-Forwarded-For hop that is not one of them, for the API's quotas and rate limits and the sites' firewall alike",
    default: '',
  },
  {
    env: 'SPACES_GEOIP_DB',
    flag: 'geoip-db',
    description:
      "MaxMind-format .mmdb giving firewall rules and Country= conditions the visitor's country and ASN",
    default: '',
  },
  {
    env: 'SPACES_TRUSTED_PROXY_HEADERS',
    flag: 'trusted-proxy-headers',
    description: 'Headers a trusted proxy sets, e.g. country=cf-ipcountry,asn=x-asn,ja3=x-ja3,ja4=x-ja4',
    default: '',
  },
  {
    env: 'SPACES_ANONYMOUS',
    flag: 'anonymous',
    description: 'on lets people publish without an account (claimable spaces)',
    default: 'on',
  },
  {
    env: 'SPACES_ANON_MAX_FILE_BYTES',
    flag: 'anon-max-file-bytes',
    description: 'Largest file in an anonymous version',
    default: '52428800',
  },
  {
    env: 'SPACES_ANON_MAX_FILES',
    flag: 'anon-max-files',
    description: 'Most files in an anonymous version',
    default: '1000',
  },
  {
    env: 'SPACES_ANON_MAX_VERSION_BYTES',
    flag: 'anon-max-version-bytes',
    description: 'Largest anonymous version',
    default: '104857600',
  },
  {
    env: 'SPACES_ANON_PUBLISHES_PER_HOUR',
    flag: 'anon-publishes-per-hour',
    description: 'Anonymous publishes per client IP per hour',
    default: '20',
  },
  {
    env: 'SPACES_ANON_SPACES_PER_IP',
    flag: 'anon-spaces-per-ip',
    description: 'Live unclaimed spaces per client IP',
    default: '25',
  },
];

/** Parses `--flag value` / `--flag=value` pairs into env-style keys. */
export function flagsToEnv(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--'))
      throw new ConfigError(arg, 'unexpected argument (flags look like --port 8080)');
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const spec = configSpec.find((s) => s.flag === name);
    if (!spec) throw new ConfigError(`--${name}`, 'unknown flag; see `spaces server --help`');
    let value: string | undefined;
    if (eq !== -1) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    if (value === undefined) throw new ConfigError(`--${name}`, 'expected a value');
    out[spec.env] = value;
  }
  return out;
}

function int(
  env: Record<string, string | undefined>,
  name: string,
  def: number,
  min: number,
  max: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw))
    throw new ConfigError(name, `expected an integer between ${min} and ${max}, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max)
    throw new ConfigError(name, `expected an integer between ${min} and ${max}, got ${n}`);
  return n;
}

function oneOf<T extends string>(
  env: Record<string, string | undefined>,
  name: string,
  values: readonly T[],
  def: T,
): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `expected one of ${values.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function url(name: string, raw: string, protocols: string[]): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected an absolute URL, got "${raw}"`);
  }
  if (!protocols.includes(u.protocol)) {
    throw new ConfigError(
      name,
      `expected a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}, got "${raw}"`,
    );
  }
  return u;
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export function loadConfig(env: Record<string, string | undefined>, cwd = process.cwd()): Config {
  const port = int(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '0.0.0.0';
  const dataDir = path.resolve(cwd, env.SPACES_DATA_DIR || './data');

  let databaseUrl = env.SPACES_DATABASE_URL || `sqlite:${path.join(dataDir, 'spaces.db')}`;
  if (databaseUrl.startsWith('postgres://') || databaseUrl.startsWith('postgresql://')) {
    url('SPACES_DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:']);
  } else if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    if (!file) throw new ConfigError('SPACES_DATABASE_URL', 'expected sqlite:<file path> or postgres://…');
    if (file !== ':memory:') databaseUrl = `sqlite:${path.resolve(cwd, file)}`;
  } else {
    throw new ConfigError(
      'SPACES_DATABASE_URL',
      `expected postgres://… or sqlite:<file>, got "${databaseUrl}"`,
    );
  }

  const publicUrlRaw = env.SPACES_PUBLIC_URL || `http://localhost:${port}`;
  const publicUrl = url('SPACES_PUBLIC_URL', publicUrlRaw, ['http:', 'https:']);
  if (publicUrl.pathname !== '/' || publicUrl.search || publicUrl.hash) {
    throw new ConfigError(
      'SPACES_PUBLIC_URL',
      'expected an origin only (scheme, host, optional port), without path or query',
    );
  }

  const baseDomain = (env.SPACES_BASE_DOMAIN || 'localhost').toLowerCase();
  if (!HOSTNAME.test(baseDomain))
    throw new ConfigError('SPACES_BASE_DOMAIN', `expected a DNS name, got "${baseDomain}"`);

  let siteScheme = publicUrl.protocol === 'https:' ? ('https' as const) : ('http' as const);
  let sitePortSuffix = publicUrl.port ? `:${publicUrl.port}` : '';
  if (env.SPACES_SITE_URL) {
    const m = /^(https?):\/\/(?::(\d{1,5}))?\/?$/.exec(env.SPACES_SITE_URL);
    if (!m)
      throw new ConfigError(
        'SPACES_SITE_URL',
        'expected a scheme with an optional port, like https:// or http://:8080',
      );
    siteScheme = m[1] as 'http' | 'https';
    sitePortSuffix = m[2] ? `:${m[2]}` : '';
  }

  const bootstrapToken = env.SPACES_BOOTSTRAP_TOKEN || null;
  if (bootstrapToken !== null) checkBootstrapToken(bootstrapToken);

  const ownerEmail = (env.SPACES_OWNER_EMAIL || 'owner@localhost').toLowerCase();
  // The same rule as every API body and form: the owner must be able to sign in with this address.
  if (!isEmailAddress(ownerEmail))
    throw new ConfigError(
      'SPACES_OWNER_EMAIL',
      `expected an e-mail address (name@host), got "${ownerEmail}"`,
    );

  const blobUrl = env.SPACES_BLOB_URL || `file://${path.join(dataDir, 'blobs')}`;
  if (!/^(file|s3):\/\//.test(blobUrl))
    throw new ConfigError('SPACES_BLOB_URL', `expected file://<dir> or s3://bucket…, got "${blobUrl}"`);

  const secretKey = env.SPACES_SECRET_KEY || null;
  if (secretKey !== null && secretKey.length < 32)
    throw new ConfigError('SPACES_SECRET_KEY', 'expected at least 32 characters');

  return {
    port,
    host,
    dataDir,
    databaseUrl,
    publicUrl: publicUrl.origin,
    publicUrlFromPort: !env.SPACES_PUBLIC_URL,
    baseDomain,
    siteScheme,
    sitePortSuffix,
    bootstrapToken,
    ownerEmail,
    signup: oneOf(env, 'SPACES_SIGNUP', ['open', 'closed'] as const, 'closed'),
    logLevel: oneOf(
      env,
      'SPACES_LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    blobUrl,
    secretKey,
    inlineBlobBytes: int(
      env,
      'SPACES_INLINE_BLOB_BYTES',
      DEFAULT_INLINE_BLOB_BYTES,
      0,
      MAX_INLINE_BLOB_BYTES,
    ),
    cacheBytes: int(env, 'SPACES_CACHE_BYTES', 256 * 1024 * 1024, 0, 2 ** 40),
    bodyLimit: int(env, 'SPACES_BODY_LIMIT', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    limits: {
      maxFileBytes: int(env, 'SPACES_MAX_FILE_BYTES', 100 * 1024 * 1024, 1, 2 ** 40),
      maxFilesPerVersion: int(env, 'SPACES_MAX_FILES', 20_000, 1, 10_000_000),
      maxVersionBytes: int(env, 'SPACES_MAX_VERSION_BYTES', 1024 * 1024 * 1024, 1, 2 ** 45),
      maxManifestBytes: int(env, 'SPACES_MAX_MANIFEST_BYTES', 16_000_000, 1024, 2 ** 31),
    },
    anonymous: {
      enabled: oneOf(env, 'SPACES_ANONYMOUS', ['on', 'off'] as const, 'on') === 'on',
      maxFileBytes: int(env, 'SPACES_ANON_MAX_FILE_BYTES', 50 * 1024 * 1024, 1, 2 ** 40),
      maxFilesPerVersion: int(env, 'SPACES_ANON_MAX_FILES', 1000, 1, 10_000_000),
      maxVersionBytes: int(env, 'SPACES_ANON_MAX_VERSION_BYTES', 100 * 1024 * 1024, 1, 2 ** 45),
      publishesPerHourPerIp: int(env, 'SPACES_ANON_PUBLISHES_PER_HOUR', 20, 1, 1_000_000),
      liveSpacesPerIp: int(env, 'SPACES_ANON_SPACES_PER_IP', 25, 1, 1_000_000),
    },
    proxyAllow: env.SPACES_PROXY_ALLOW ?? '',
    webhookAllow: webhookPolicy(env.SPACES_WEBHOOK_ALLOW ?? ''),
    dnsServers: dnsServerList(env.SPACES_DNS_SERVERS ?? ''),
    domainTarget: domainTarget(env.SPACES_DOMAIN_TARGET ?? ''),
    domainAddresses: addressList('SPACES_DOMAIN_ADDRESSES', env.SPACES_DOMAIN_ADDRESSES ?? ''),
    httpsPort: env.SPACES_HTTPS_PORT ? int(env, 'SPACES_HTTPS_PORT', 0, 0, 65535) : null,
    httpsPortSuffix: '',
    acmeDirectory: httpsUrl('SPACES_ACME_DIRECTORY', env.SPACES_ACME_DIRECTORY || LETS_ENCRYPT),
    acmeEmail: env.SPACES_ACME_EMAIL || null,
    acmeCaFile: readableFile('SPACES_ACME_CA_FILE', env.SPACES_ACME_CA_FILE, cwd),
    ...tlsFiles(env, cwd),
    rfc2136: rfc2136Settings(env),
    http2: oneOf(env, 'SPACES_HTTP2', ['on', 'off'] as const, 'off') === 'on',
    geoipDb: geoip(env.SPACES_GEOIP_DB, cwd),
    trustedProxyHeaders: trustedHeaders(env.SPACES_TRUSTED_PROXY_HEADERS ?? ''),
    trustedProxies: trustedProxyList(env.SPACES_TRUSTED_PROXIES ?? ''),
    accessLog: {
      enabled: oneOf(env, 'SPACES_ACCESS_LOG', ['on', 'off'] as const, 'on') === 'on',
      retentionDays: int(env, 'SPACES_ACCESS_LOG_RETENTION_DAYS', 30, 1, 3650),
    },
    worker: oneOf(env, 'SPACES_WORKER', ['on', 'off'] as const, 'on') === 'on',
    jobPollMs: int(env, 'SPACES_JOB_POLL_MS', 1000, 10, 3600_000),
    thumbnails: oneOf(env, 'SPACES_THUMBNAILS', ['auto', 'off'] as const, 'auto'),
    functionsTimeoutMs: int(env, 'SPACES_FUNCTIONS_TIMEOUT_MS', 30_000, 10, 3_600_000),
    functionsIdleMs: int(env, 'SPACES_FUNCTIONS_IDLE_MS', 300_000, 100, 86_400_000),
    instanceUrl: instanceUrl(env.SPACES_INSTANCE_URL),
    spaceDbLeaseMs: int(env, 'SPACES_SPACE_DB_LEASE_MS', 30_000, 1000, 3_600_000),
    chromiumPath: env.SPACES_CHROMIUM_PATH || '/usr/bin/chromium',
    thumbnailTimeoutMs: int(env, 'SPACES_THUMBNAIL_TIMEOUT_MS', 20_000, 1000, 600_000),
    builds: {
      concurrency: int(env, 'SPACES_BUILD_CONCURRENCY', 1, 1, 64),
      timeoutSeconds: int(env, 'SPACES_BUILD_TIMEOUT', 900, 1, 7200),
      gitAllow: gitAllowList(env.SPACES_GIT_ALLOW ?? ''),
    },
    shutdownTimeoutMs: int(env, 'SPACES_SHUTDOWN_TIMEOUT', 10, 1, 3600) * 1000,
    drainMs: int(env, 'SPACES_DRAIN_SECONDS', 3, 0, 3600) * 1000,
    metricsToken: metricsToken(env.SPACES_METRICS_TOKEN ?? ''),
    mail: mailSettings(env, cwd, dataDir, publicUrl.hostname),
  };
}

function mailSettings(
  env: Record<string, string | undefined>,
  cwd: string,
  dataDir: string,
  host: string,
): MailSettings {
  const from = (env.SPACES_MAIL_FROM ?? '').trim() || `Spaces <no-reply@${host}>`;
  if (/[\r\n]/.test(from)) throw new ConfigError('SPACES_MAIL_FROM', 'expected one line');
  const address = /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from;
  if (!/^[^\s@]+@[^\s@]+$/.test(address)) {
    throw new ConfigError(
      'SPACES_MAIL_FROM',
      `expected an address like "Spaces <spaces@example.com>", got "${from}"`,
    );
  }
  const raw = (env.SPACES_MAIL ?? '').trim() || 'file';
  if (raw === 'file') return { transport: 'file', dir: path.join(dataDir, 'mail'), from };
  if (raw.startsWith('file:')) return { transport: 'file', dir: path.resolve(cwd, raw.slice(5)), from };
  if (raw === 'log') return { transport: 'log', from };
  if (raw.startsWith('smtp://') || raw.startsWith('smtps://')) {
    url('SPACES_MAIL', raw, ['smtp:', 'smtps:']);
    return { transport: 'smtp', url: raw, from };
  }
  throw new ConfigError('SPACES_MAIL', `expected file, file:<dir>, log, smtp://… or smtps://…, got "${raw}"`);
}

function metricsToken(raw: string): string | null {
  if (raw === '') return null;
  if (raw.length < 16) throw new ConfigError('SPACES_METRICS_TOKEN', 'expected at least 16 characters');
  return raw;
}

function webhookPolicy(raw: string): OutboundPolicy {
  try {
    return parseOutboundPolicy(raw, 'SPACES_WEBHOOK_ALLOW');
  } catch (err) {
    throw new ConfigError(
      'SPACES_WEBHOOK_ALLOW',
      (err as Error).message.replace(/^SPACES_WEBHOOK_ALLOW: /, ''),
    );
  }
}

function gitAllowList(raw: string): ReadonlySet<string> {
  const known = ['file', 'loopback', 'private', 'http'];
  const items = listOf(raw);
  for (const i of items) {
    if (!known.includes(i))
      throw new ConfigError('SPACES_GIT_ALLOW', `"${i}" is not one of ${known.join(', ')}`);
  }
  return new Set(items);
}

const listOf = (raw: string) =>
  raw
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

/** `ip`, `ip:port` or `[v6]:port`, as node:dns's `setServers` takes them. */
function dnsServerList(raw: string): string[] {
  return listOf(raw).map((entry) => {
    if (isIP(entry) !== 0) return entry;
    const m = /^\[([^\]]+)\]:(\d+)$/.exec(entry) ?? /^([^:]+):(\d+)$/.exec(entry);
    if (m && isIP(m[1]!) !== 0 && Number(m[2]) >= 1 && Number(m[2]) <= 65535) return entry;
    throw new ConfigError('SPACES_DNS_SERVERS', `"${entry}" is not an IP address with an optional port`);
  });
}

function httpsUrl(name: string, raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(name, `"${raw}" is not a URL`);
  }
  if (u.protocol !== 'https:')
    throw new ConfigError(name, `"${raw}" is not an https URL (ACME requires TLS)`);
  return u.toString();
}

function readableFile(name: string, raw: string | undefined, cwd: string): string | null {
  if (!raw) return null;
  const file = path.resolve(cwd, raw);
  try {
    fs.accessSync(file, fs.constants.R_OK);
  } catch {
    throw new ConfigError(name, `cannot read ${file}`);
  }
  return file;
}

function tlsFiles(
  env: Record<string, string | undefined>,
  cwd: string,
): { tlsCert: string | null; tlsKey: string | null } {
  const tlsCert = readableFile('SPACES_TLS_CERT', env.SPACES_TLS_CERT, cwd);
  const tlsKey = readableFile('SPACES_TLS_KEY', env.SPACES_TLS_KEY, cwd);
  if ((tlsCert === null) !== (tlsKey === null)) {
    throw new ConfigError(
      tlsCert ? 'SPACES_TLS_KEY' : 'SPACES_TLS_CERT',
      'set both SPACES_TLS_CERT and SPACES_TLS_KEY, or neither',
    );
  }
  return { tlsCert, tlsKey };
}

/** SPACES_INSTANCE_URL: an http(s) origin (no path), or unset. */
function instanceUrl(raw: string | undefined): string | null {
  if (!raw) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError('SPACES_INSTANCE_URL', 'expected an http(s) URL such as http://10.0.0.5:8080');
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || (u.pathname !== '/' && u.pathname !== ''))
    throw new ConfigError('SPACES_INSTANCE_URL', 'expected an http(s) origin without a path');
  return u.origin;
}

/** SPACES_RFC2136_*: all of server, zone, key name and secret, or none of them. */
function rfc2136Settings(env: Record<string, string | undefined>): Rfc2136Options | null {
  const names = [
    'SPACES_RFC2136_SERVER',
    'SPACES_RFC2136_ZONE',
    'SPACES_RFC2136_KEY_NAME',
    'SPACES_RFC2136_KEY_SECRET',
  ] as const;
  const set = names.filter((n) => env[n]);
  if (set.length === 0) return null;
  const unset = names.find((n) => !env[n]);
  if (unset) throw new ConfigError(unset, `needed with ${set.join(', ')} (the RFC 2136 DNS provider)`);
  const server = env.SPACES_RFC2136_SERVER!.trim();
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(server) ?? /^([^:]+)(?::(\d+))?$/.exec(server);
  const host = m?.[1];
  const port = Number(m?.[2] ?? 53);
  if (!host || !(isIP(host) !== 0 || HOSTNAME.test(host)) || port < 1 || port > 65535) {
    throw new ConfigError('SPACES_RFC2136_SERVER', `"${server}" is not a host with an optional port`);
  }
  const zones = listOf(env.SPACES_RFC2136_ZONE!).map((z) => z.toLowerCase().replace(/\.$/, ''));
  for (const z of zones) {
    if (!HOSTNAME.test(z)) throw new ConfigError('SPACES_RFC2136_ZONE', `"${z}" is not a DNS name`);
  }
  const algorithm = (env.SPACES_RFC2136_KEY_ALGORITHM || 'hmac-sha256').toLowerCase();
  if (!Object.hasOwn(TSIG_ALGORITHMS, algorithm)) {
    throw new ConfigError(
      'SPACES_RFC2136_KEY_ALGORITHM',
      `expected one of ${Object.keys(TSIG_ALGORITHMS).join(', ')}, got "${algorithm}"`,
    );
  }
  const raw = env.SPACES_RFC2136_KEY_SECRET!.trim();
  const secret = Buffer.from(raw, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(raw) || secret.length === 0) {
    throw new ConfigError('SPACES_RFC2136_KEY_SECRET', 'expected the base64 secret of the TSIG key');
  }
  return {
    host,
    port,
    keyName: env.SPACES_RFC2136_KEY_NAME!.trim().toLowerCase().replace(/\.$/, ''),
    algorithm: algorithm as TsigAlgorithm,
    secret,
    zones,
  };
}

function addressList(name: string, raw: string): string[] {
  return listOf(raw).map((entry) => {
    if (isIP(entry) === 0) throw new ConfigError(name, `"${entry}" is not an IP address`);
    return entry;
  });
}

function domainTarget(raw: string): string | null {
  const t = raw.trim().toLowerCase().replace(/\.$/, '');
  if (!t) return null;
  if (!HOSTNAME.test(t)) throw new ConfigError('SPACES_DOMAIN_TARGET', `"${raw}" is not a hostname`);
  return t;
}

function geoip(raw: string | undefined, cwd: string): string | null {
  if (!raw) return null;
  const file = path.resolve(cwd, raw);
  if (!fs.existsSync(file))
    throw new ConfigError('SPACES_GEOIP_DB', `expected a readable .mmdb file, "${file}" does not exist`);
  return file;
}

function trustedHeaders(raw: string): string {
  try {
    parseTrustedHeaders(raw);
  } catch (err) {
    throw new ConfigError(
      'SPACES_TRUSTED_PROXY_HEADERS',
      `expected attribute=header pairs: ${(err as Error).message}`,
    );
  }
  return raw;
}

function trustedProxyList(raw: string): string[] {
  const list = raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const c of list) {
    try {
      if (c.includes('/')) ipaddr.parseCIDR(c);
      else ipaddr.parse(c);
    } catch {
      throw new ConfigError('SPACES_TRUSTED_PROXIES', `expected IP addresses or CIDR ranges, got "${c}"`);
    }
  }
  return list;
}

/** A bootstrap token must look like an API key and carry at least 128 bits of apparent entropy. */
export function checkBootstrapToken(token: string): void {
  if (!token.startsWith('sfa_')) {
    throw new ConfigError('SPACES_BOOTSTRAP_TOKEN', 'expected an API key starting with "sfa_"');
  }
  const body = token.slice(4);
  if (!/^[A-Za-z0-9_-]+$/.test(body)) {
    throw new ConfigError(
      'SPACES_BOOTSTRAP_TOKEN',
      'expected only letters, digits, "-" and "_" after "sfa_"',
    );
  }
  if (estimateEntropyBits(body) < 128) {
    throw new ConfigError(
      'SPACES_BOOTSTRAP_TOKEN',
      'too little entropy: use at least 32 random characters after "sfa_", e.g. sfa_$(openssl rand -hex 32)',
    );
  }
}

/** Shannon entropy of the observed characters times the length: a repeated or tiny alphabet scores low. */
export function estimateEntropyBits(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / s.length;
    h -= p * Math.log2(p);
  }
  // Per-character entropy can't exceed log2 of the alphabet a random token would be drawn from.
  const classes =
    (/[a-z]/.test(s) ? 26 : 0) +
    (/[A-Z]/.test(s) ? 26 : 0) +
    (/[0-9]/.test(s) ? 10 : 0) +
    (/[-_]/.test(s) ? 2 : 0);
  return Math.min(h, Math.log2(Math.max(classes, 2))) * s.length;
}

/**
 * How a person logs the CLI in to this server, as the first start and the home page say it: plain
 * `spaces login` when the CLI's default address is this server, else with `--api-url` (which the
 * login stores, so later commands follow it).
 */
export function cliLoginCommand(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, '') === DEFAULT_API_URL
    ? 'spaces login'
    : `spaces login --api-url ${publicUrl}`;
}
