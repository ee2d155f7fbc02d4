import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Nullable } from './common.ts';
import { defineSchema } from './registry.ts';

/**
 * SpaceConfig: the settings overlay of a space (spec "SpaceConfig (overlay)").
 *
 * Every object is closed. Rules JSON Schema cannot state (firewall `status` only on `block`, clause
 * `value`/`values` by `op`, IP/CIDR syntax, `cache`/`notFound` against the rewrite destination,
 * `defaultDataSource` naming an entry, data source URL rules, header names) live in
 * `src/domain/spaces/settings-overlay.ts`, which runs this schema first.
 */

const closed = { additionalProperties: false } as const;
/** `{type, enum}` rather than a union of consts, so a wrong value names every allowed one. */
const StringEnum = <T extends string>(values: readonly T[], options: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
const Opt = <T extends TSchema>(t: T) => Type.Optional(t);

// ---- colour grammar (theme.accent / theme.background) ---------------------------------------------
const NUM = '[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)';
const PCT = `${NUM}%?`;
const HUE = `${NUM}(?:deg|grad|rad|turn)?`;
const ALPHA = PCT;
// Legacy comma form and CSS Color 4 space form with an optional `/ alpha`.
const rgbFn = `rgba?\\(\\s*${PCT}\\s*,\\s*${PCT}\\s*,\\s*${PCT}\\s*(?:,\\s*${ALPHA}\\s*)?\\)|rgba?\\(\\s*${PCT}\\s+${PCT}\\s+${PCT}\\s*(?:/\\s*${ALPHA}\\s*)?\\)`;
const hslFn = `hsla?\\(\\s*${HUE}\\s*,\\s*${PCT}\\s*,\\s*${PCT}\\s*(?:,\\s*${ALPHA}\\s*)?\\)|hsla?\\(\\s*${HUE}\\s+${PCT}\\s+${PCT}\\s*(?:/\\s*${ALPHA}\\s*)?\\)`;
/** Hex of 3, 4, 6 or 8 digits; rgb/rgba/hsl/hsla functions; a colour name of 3..30 letters. */
export const COLOR_PATTERN = `^(?:#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|${rgbFn}|${hslFn}|[A-Za-z]{3,30})$`;

const Color = Type.String({
  maxLength: 64,
  pattern: COLOR_PATTERN,
  description: 'Hex colour (#rgb, #rgba, #rrggbb, #rrggbbaa), rgb()/rgba()/hsl()/hsla(), or a colour name',
});

/** https URL or a root-relative path (`/logo.svg`; `//host` is not root-relative); no whitespace or backslash. */
export const LOGO_PATTERN = '^(?:https://[^\\s\\\\]+|/(?![/\\\\])[^\\s\\\\]*)$';
/** Letters, digits, space, comma, apostrophe, double quote, hyphen. */
export const FONT_PATTERN = '^[\\p{L}0-9 ,\'"-]+$';

// ---- shared pieces ------------------------------------------------------------------------------------
/** Lowercase letters, digits, `-`, `_`; at most 61 characters (firewall and cache-bypass rule names). */
export const RULE_NAME_PATTERN = '^[a-z0-9_-]+$';
/** A data source name: a letter or underscore, then letters, digits, underscores; 1..128 characters. */
export const SOURCE_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
export const RESERVED_SOURCE_NAMES = ['__proto__', 'constructor', 'prototype'] as const;

const SourceName = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: SOURCE_NAME_PATTERN,
  not: { enum: [...RESERVED_SOURCE_NAMES] },
});

export const CLAUSE_OPS = [
  'eq',
  'neq',
  'in',
  'inCidr',
  'contains',
  'startsWith',
  'endsWith',
  'wildcard',
  'exists',
] as const;

const MatchString = Type.String({ maxLength: 1024 });

export const TrafficRuleClause = Type.Object(
  {
    op: StringEnum(CLAUSE_OPS),
    value: Opt(MatchString),
    values: Opt(Type.Array(MatchString, { minItems: 1, maxItems: 256 })),
    not: Opt(Type.Boolean()),
  },
  closed,
);

/** A string (exact, or wildcard when it holds `*`), a list of strings (any), or a clause. */
export const TrafficRuleValue = Type.Union([
  MatchString,
  Type.Array(MatchString, { minItems: 1, maxItems: 256 }),
  TrafficRuleClause,
]);

// Record keys go through `propertyNames`: a pattern key in Type.Record would only select which
// properties the value schema applies to, letting other names through.
const NamedValues = Type.Record(Type.String(), TrafficRuleValue, {
  minProperties: 1,
  maxProperties: 64,
  propertyNames: { type: 'string', minLength: 1, maxLength: 256 },
});

export const SCALAR_MATCH_KEYS = [
  'path',
  'host',
  'method',
  'ip',
  'country',
  'asn',
  'userAgent',
  'referer',
  'extension',
  'ja3',
  'ja4',
] as const;
export const NAMED_MATCH_KEYS = ['header', 'cookie', 'query'] as const;

const TypedMatch = Type.Object(
  {
    ...Object.fromEntries(SCALAR_MATCH_KEYS.map((k) => [k, Opt(TrafficRuleValue)])),
    ...Object.fromEntries(NAMED_MATCH_KEYS.map((k) => [k, Opt(NamedValues)])),
  },
  closed,
);

/**
 * At least one attribute. The value schemas are attached once per group through `patternProperties`
 * rather than once per attribute: written out per attribute, the union is compiled 28 times and the
 * validator grows to hundreds of kilobytes of code. `properties` still lists every attribute (by name
 * and description) for readers of the served schema; unknown attributes are refused.
 */
export const TrafficRuleMatch = Type.Unsafe<Static<typeof TypedMatch>>({
  type: 'object',
  description: 'TrafficRuleMatch: at least one attribute; all must hold unless the rule sets any',
  properties: {
    ...Object.fromEntries(SCALAR_MATCH_KEYS.map((k) => [k, { description: 'TrafficRuleValue' }])),
    ...Object.fromEntries(
      NAMED_MATCH_KEYS.map((k) => [k, { description: `Object from a ${k} name to a TrafficRuleValue` }]),
    ),
  },
  patternProperties: {
    [`^(?:${SCALAR_MATCH_KEYS.join('|')})$`]: TrafficRuleValue,
    [`^(?:${NAMED_MATCH_KEYS.join('|')})$`]: NamedValues,
  },
  additionalProperties: false,
  minProperties: 1,
});

const RuleName = Type.String({ minLength: 1, maxLength: 61, pattern: RULE_NAME_PATTERN });
const RuleDescription = Type.String({ maxLength: 1000 });

export const FirewallRule = Type.Object(
  {
    name: Opt(RuleName),
    description: Opt(RuleDescription),
    action: StringEnum(['block', 'challenge'] as const),
    // Default 403 is filled in by the validator for `block` rules only (a schema default would land on
    // `challenge` rules too, where `status` is not allowed).
    status: Opt(Type.Integer({ minimum: 400, maximum: 599 })),
    match: TrafficRuleMatch,
    any: Opt(Type.Boolean({ default: false })),
  },
  closed,
);

export const CacheBypassRule = Type.Object(
  {
    name: Opt(RuleName),
    description: Opt(RuleDescription),
    match: TrafficRuleMatch,
    any: Opt(Type.Boolean({ default: false })),
  },
  closed,
);

const RoutePattern = Type.String({ minLength: 1, maxLength: 2048 });
/** Query parameter name → capture name (`:cap` or `cap`). */
const QueryCaptures = Type.Record(
  Type.String(),
  Type.String({ minLength: 1, maxLength: 129, pattern: '^:?[A-Za-z][A-Za-z0-9_]*$' }),
  {
    maxProperties: 32,
    propertyNames: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z][A-Za-z0-9_-]*$' },
  },
);

export const RedirectRule = Type.Object(
  {
    source: RoutePattern,
    destination: RoutePattern,
    status: Opt(
      Type.Unsafe<301 | 302 | 303 | 307 | 308>({
        type: 'integer',
        enum: [301, 302, 303, 307, 308],
        default: 302,
      }),
    ),
    force: Opt(Type.Boolean()),
    query: Opt(QueryCaptures),
  },
  closed,
);

export const RewriteRule = Type.Object(
  {
    source: RoutePattern,
    destination: RoutePattern,
    cache: Opt(Type.String({ minLength: 1, maxLength: 64 })),
    force: Opt(Type.Boolean()),
    query: Opt(QueryCaptures),
    notFound: Opt(Type.Boolean()),
  },
  closed,
);

const HeaderName = Type.String({ minLength: 1, maxLength: 256 });
const HeaderValue = Type.String({ maxLength: 8192 });
export const HeaderRule = Type.Object(
  {
    source: RoutePattern,
    headers: Type.Array(
      Type.Union([
        Type.Object({ key: HeaderName, value: HeaderValue }, closed),
        Type.Object({ key: HeaderName, remove: Type.Literal(true) }, closed),
      ]),
      { minItems: 1, maxItems: 100 },
    ),
  },
  closed,
);

const NullableCommand = Nullable(Type.String({ minLength: 1, maxLength: 4096 }));

/** The overlay's keys; the settings file (`spaces.json(c)`) holds them too, beside its own. */
const overlayProperties = {
  index: Opt(Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), Type.Literal(false)])),
  fallback: Opt(
    Type.Union([
      Type.String({ minLength: 1, maxLength: 1024 }),
      Type.Object(
        {
          path: Type.String({ minLength: 1, maxLength: 1024 }),
          status: Type.Integer({ minimum: 100, maximum: 599 }),
        },
        closed,
      ),
    ]),
  ),
  cleanUrls: Opt(Type.Boolean()),
  listing: Opt(Type.Boolean()),
  meta: Opt(
    Type.Object(
      {
        title: Opt(Type.String({ minLength: 1, maxLength: 300 })),
        description: Opt(Type.String({ maxLength: 1000 })),
        image: Opt(Type.String({ maxLength: 2000 })),
        favicon: Opt(Type.String({ maxLength: 2000 })),
      },
      closed,
    ),
  ),
  superpowers: Opt(
    Type.Object(
      {
        enabled: Opt(Type.Boolean()),
        disable_all_injection: Opt(Type.Boolean()),
        vendorAnalytics: Opt(
          Type.Object(
            { enabled: Opt(Type.Boolean()), measurementId: Opt(Type.String({ maxLength: 64 })) },
            closed,
          ),
        ),
        vendorTagManager: Opt(
          Type.Object(
            { enabled: Opt(Type.Boolean()), containerId: Opt(Type.String({ maxLength: 64 })) },
            closed,
          ),
        ),
        javascriptTags: Opt(
          Type.Array(
            Type.Object(
              {
                id: Opt(Type.String({ maxLength: 128 })),
                name: Opt(Type.String({ maxLength: 160 })),
                enabled: Opt(Type.Boolean()),
                code: Type.String({ maxLength: 8192 }),
              },
              closed,
            ),
            { maxItems: 16 },
          ),
        ),
        tags: Opt(
          Type.Object(
            {
              inheritance: Opt(
                Type.Object(
                  {
                    inherited: Opt(Type.Boolean()),
                    overrides: Opt(
                      Type.Array(
                        Type.Object(
                          {
                            tagId: Type.String({ minLength: 1, maxLength: 256 }),
                            disabled: Opt(Type.Boolean({ default: false })),
                            reason: Opt(Nullable(Type.String({ maxLength: 500 }))),
                          },
                          closed,
                        ),
                        { maxItems: 128 },
                      ),
                    ),
                  },
                  closed,
                ),
              ),
              requireReview: Opt(Type.Boolean()),
            },
            closed,
          ),
        ),
      },
      closed,
    ),
  ),
  templates: Opt(Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), { maxItems: 100 })),
  theme: Opt(
    Type.Object(
      {
        accent: Opt(Color),
        background: Opt(Color),
        logo: Opt(Type.String({ minLength: 1, maxLength: 2000, pattern: LOGO_PATTERN })),
        name: Opt(Type.String({ minLength: 1, maxLength: 120 })),
        font: Opt(Type.String({ minLength: 1, maxLength: 256, pattern: FONT_PATTERN })),
        hideServiceBranding: Opt(Type.Boolean()),
      },
      closed,
    ),
  ),
  collab: Opt(Type.Object({ ui: Opt(StringEnum(['default', 'custom'] as const)) }, closed)),
  build: Opt(
    Type.Object(
      {
        rootDirectory: Opt(NullableCommand),
        installDirectory: Opt(NullableCommand),
        installCommand: Opt(NullableCommand),
        buildCommand: Opt(NullableCommand),
        outputDirectory: Opt(NullableCommand),
        ignoredBuildCommand: Opt(NullableCommand),
        frameworkPreset: Opt(NullableCommand),
        platformPreset: Opt(NullableCommand),
        allowUnsupportedPlatformFeatures: Opt(Type.Boolean()),
        timeoutSeconds: Opt(Type.Integer({ minimum: 60, maximum: 7200 })),
      },
      closed,
    ),
  ),
  placement: Opt(Type.Object({ burstable: Opt(Type.Boolean()), edge: Opt(Type.Boolean()) }, closed)),
  markdownNegotiation: Opt(Type.Boolean()),
  hsts: Opt(
    Type.Object(
      {
        maxAge: Type.Integer({
          minimum: 0,
          maximum: 63072000,
          description: 'Seconds browsers keep to HTTPS (0 withdraws it); at most two years',
        }),
        includeSubDomains: Opt(Type.Boolean()),
        preload: Opt(Type.Boolean()),
      },
      { ...closed, description: 'Strict-Transport-Security on the site’s HTTPS answers (opt-in)' },
    ),
  ),
  firewall: Opt(Type.Array(FirewallRule, { maxItems: 256 })),
  cache: Opt(Type.Object({ bypass: Opt(Type.Array(CacheBypassRule, { maxItems: 50 })) }, closed)),
  redirects: Opt(Type.Array(RedirectRule, { maxItems: 2100 })),
  rewrites: Opt(Type.Array(RewriteRule, { maxItems: 2100 })),
  headers: Opt(Type.Array(HeaderRule, { maxItems: 100 })),
  users: Opt(
    Type.Object(
      {
        enabled: Type.Boolean(),
        providers: Type.Object(
          {
            identityProvider: Type.Object(
              {
                mode: Type.String({ minLength: 1, maxLength: 64 }),
                clientId: Type.String({ minLength: 1, maxLength: 512 }),
              },
              closed,
            ),
            avatarProvider: Type.Object({ enabled: Type.Boolean() }, closed),
            service: Type.Object({ enabled: Type.Boolean() }, closed),
          },
          closed,
        ),
      },
      closed,
    ),
  ),
  dataSources: Opt(
    Type.Record(
      Type.String(),
      Type.Object({ kind: Type.Literal('cms'), url: Type.String({ minLength: 1, maxLength: 2048 }) }, closed),
      { maxProperties: 32, propertyNames: SourceName },
    ),
  ),
  defaultDataSource: Opt(SourceName),
};

export const SpaceConfig = defineSchema(
  'SpaceConfig',
  Type.Object(overlayProperties, {
    ...closed,
    description: 'Settings overlay applied over the live version’s configuration file',
  }),
);

// ---- the settings file ------------------------------------------------------------------------------

export const ACCESS_LEVELS = ['private', 'team', 'public'] as const;
/** `runtime.kind`: the functions runtime, or the capsule runtime (behaviour §9). */
export const RUNTIME_KINDS = ['functions', 'capsule'] as const;
/** What a functions version may do beyond answering requests (issue 26). */
export const RUNTIME_CAPABILITIES = ['fetch'] as const;
export const MAX_CRONS = 8;
/**
 * A cron path: literal, starting with `/`, with a letter or digit somewhere; no splat (`*`),
 * placeholder (`:name`), query or fragment (behaviour §4.8).
 */
export const CRON_PATH_PATTERN = '^/(?=[^?#]*[A-Za-z0-9])[^*:?#\\s]*$';
const CRON_FIELD = '(?:\\*|[0-9]{1,2}(?:-[0-9]{1,2})?)(?:/[0-9]{1,2})?';
/**
 * `hourly`, `daily`, `twicedaily`, `weekly`; `Nh` (1–12), `Nd` (1–23), `Nw` (1–6); or five crontab
 * fields of numbers, lists, ranges and steps (the ranges of each field are checked in the domain).
 */
export const CRON_SCHEDULE_PATTERN = `^(?:hourly|daily|twicedaily|weekly|(?:[1-9]|1[0-2])h|(?:[1-9]|1[0-9]|2[0-3])d|[1-6]w|${CRON_FIELD}(?:,${CRON_FIELD})*(?: ${CRON_FIELD}(?:,${CRON_FIELD})*){4})$`;

const Snippets = Opt(
  Type.Array(Type.String({ maxLength: 8192 }), {
    maxItems: 16,
    description: 'Up to 16 HTML snippets of up to 8 KB each',
  }),
);

/**
 * The settings file at a version's root (`spaces.jsonc` or `spaces.json`), served at
 * `/schemas/spaces.json` (behaviour §4.1 names that URL; editors read it for completion): every
 * overlay key plus the file's own. Registered under the name its URL needs.
 */
export const SettingsFile = defineSchema(
  'spaces',
  Type.Object(
    {
      $schema: Opt(
        Type.String({
          maxLength: 2048,
          description: 'This schema’s URL, for editors; ignored by the server',
        }),
      ),
      space: Opt(
        Type.String({
          minLength: 1,
          maxLength: 255,
          description:
            'The space this site is published to (id or slug): `spaces publish` uses it where the directory is not linked',
        }),
      ),
      name: Opt(
        Type.String({
          minLength: 1,
          maxLength: 255,
          description: 'The space’s name in its hostname, managed by this file (no effect yet)',
        }),
      ),
      ...overlayProperties,
      access: Opt(
        Type.Union(
          [
            StringEnum(ACCESS_LEVELS),
            Type.Object(
              {
                public: Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), {
                  minItems: 1,
                  maxItems: 100,
                  description: 'Path globs anyone may see; `!glob` excludes',
                }),
              },
              closed,
            ),
          ],
          {
            description:
              'Opens the site beyond the space’s own access: `"public"` opens every path, `{public: [globs, "!neg"]}` those paths (`*` within a segment, `**` any segments); `"team"`/`"private"` add nothing',
          },
        ),
      ),
      inject: Opt(
        Type.Object(
          { head: Snippets, bodyStart: Snippets, bodyEnd: Snippets, noscript: Snippets },
          { ...closed, description: 'HTML added to every HTML page' },
        ),
      ),
      runtime: Opt(
        Type.Object(
          {
            kind: StringEnum(RUNTIME_KINDS),
            entry: Opt(Type.String({ minLength: 1, maxLength: 1024 })),
            database: Opt(Type.Boolean()),
            compatibilityDate: Opt(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
            capabilities: Opt(
              Type.Array(StringEnum(RUNTIME_CAPABILITIES), {
                maxItems: 8,
                uniqueItems: true,
                description: '`fetch`: the worker may make outbound requests (to public addresses only)',
              }),
            ),
            server: Opt(Type.String({ minLength: 1, maxLength: 1024 })),
            client: Opt(Type.String({ minLength: 1, maxLength: 1024 })),
          },
          {
            ...closed,
            description:
              'Code this version runs: `functions` runs in workerd (the capsule runtime has no effect yet)',
          },
        ),
      ),
      crons: Opt(
        Type.Array(
          Type.Object(
            {
              path: Type.String({ minLength: 1, maxLength: 512, pattern: CRON_PATH_PATTERN }),
              schedule: Type.String({ minLength: 1, maxLength: 128, pattern: CRON_SCHEDULE_PATTERN }),
            },
            closed,
          ),
          {
            maxItems: MAX_CRONS,
            description:
              'Paths of the live version requested on a schedule (UTC): `GET <path>` through normal routing with `x-service-cron`, and `authorization: Bearer <CRON_SECRET>` when the space has that variable',
          },
        ),
      ),
    },
    {
      ...closed,
      title: 'spaces.json',
      description:
        'Settings of a site, at the root of what is published as spaces.jsonc (comments allowed) or spaces.json',
    },
  ),
);
export type SettingsFile = Static<typeof SettingsFile>;

export type SpaceConfig = Static<typeof SpaceConfig>;
export type TrafficRuleValue = Static<typeof TrafficRuleValue>;
export type TrafficRuleClause = Static<typeof TrafficRuleClause>;
export type TrafficRuleMatch = Static<typeof TrafficRuleMatch>;
