import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable, PageEnvelope } from './common.ts';
import { defineSchema } from './registry.ts';

const Role = Type.Union([Type.Literal('standard'), Type.Literal('redirect')], {
  description:
    '`standard` serves the bound space; `redirect` answers every request with a redirect to `redirect.target`',
});
const Redirect = Type.Object(
  {
    target: Type.String({
      minLength: 1,
      maxLength: 253,
      description: 'Hostname visitors are sent to; path and query are kept',
    }),
    status: Type.Optional(
      Type.Union([Type.Literal(301), Type.Literal(302), Type.Literal(307), Type.Literal(308)], {
        default: 308,
      }),
    ),
  },
  { additionalProperties: false },
);
const Status = Type.Union(
  ['pending', 'verified', 'verification_failed', 'control_lost'].map((s) => Type.Literal(s)),
  {
    description:
      '`pending` until the ownership record is seen; `verified` (served); `verification_failed` after a day of checks without it (`verify` looks again); `control_lost` when a verified domain’s record went away or another team took it over',
  },
);

const Purpose = Type.Union(
  [Type.Literal('ownership'), Type.Literal('routing'), Type.Literal('certificate')],
  {
    description:
      '`ownership`: the TXT record that proves control (a wildcard’s is on its parent); `routing`: sends visitors here; `certificate`: the `_acme-challenge` CNAME a wildcard’s DNS-01 certificate needs when its zone is not one this server updates',
  },
);

export const DomainRecordSchema = Type.Object(
  {
    purpose: Purpose,
    type: Type.Union([Type.Literal('TXT'), Type.Literal('CNAME'), Type.Literal('A'), Type.Literal('AAAA')]),
    name: Type.String({ description: 'Where to create the record (A-labels)' }),
    value: Nullable(
      Type.String({ description: 'What it must hold; null when this server cannot say (see note)' }),
    ),
    state: Type.Union(['ok', 'missing', 'mismatch', 'unknown', 'unchecked'].map((s) => Type.Literal(s))),
    seen: Type.Array(Type.String(), { description: 'What DNS answered at the last check' }),
    note: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const CertificateSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('issued'), Type.Literal('failed'), Type.Literal('pending')], {
      description:
        '`issued` (in service); `failed` (the last order failed: retried with back-off, see `lastError`)',
    }),
    notBefore: Nullable(DateTime),
    notAfter: Nullable(DateTime),
    renewAfter: Nullable(DateTime),
    lastError: Nullable(Type.String()),
    nextAttemptAt: Nullable(DateTime),
  },
  { additionalProperties: false },
);

export const DomainSchema = Type.Object(
  {
    id: Type.String(),
    teamId: Type.String(),
    hostname: Type.String({ description: 'As people read it (U-labels)' }),
    asciiHostname: Type.String({ description: 'As DNS and browsers send it (A-labels)' }),
    apex: Type.Boolean({ description: 'A registrable domain itself: it needs A/AAAA records, not a CNAME' }),
    wildcard: Type.Boolean(),
    spaceId: Nullable(Type.String()),
    role: Role,
    redirect: Nullable(Redirect),
    status: Status,
    verified: Type.Boolean(),
    verifiedAt: Nullable(DateTime),
    records: Type.Array(DomainRecordSchema),
    certificate: Nullable(CertificateSchema),
    checkedAt: Nullable(DateTime),
    nextCheckAt: Nullable(DateTime),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { additionalProperties: false },
);

export const DomainResponse = defineSchema('DomainResponse', DataEnvelope(DomainSchema));
export const DomainListResponse = defineSchema('DomainList', PageEnvelope(DomainSchema));
export const DomainDiagnosticsResponse = defineSchema(
  'DomainDiagnostics',
  DataEnvelope(
    Type.Object(
      {
        domain: DomainSchema,
        serving: Type.Union(
          [
            Type.Literal('ready'),
            Type.Literal('waiting_for_dns'),
            Type.Literal('waiting_for_certificate'),
            Type.Literal('no_https'),
          ],
          {
            description:
              '`ready`: verified, routed here and (with HTTPS on) holding a certificate; otherwise what it waits for',
          },
        ),
        problems: Type.Array(Type.String(), { description: 'What to fix, in the order to fix it' }),
      },
      { additionalProperties: false },
    ),
  ),
);
export const SpaceDomainListResponse = defineSchema(
  'SpaceDomainList',
  DataEnvelope(Type.Array(DomainSchema)),
);

export const CreateDomainBody = defineSchema(
  'CreateDomainRequest',
  Type.Object(
    {
      hostname: Type.String({
        minLength: 1,
        maxLength: 300,
        description: 'The hostname, e.g. `www.example.com`; IDNs welcome',
      }),
      team: Type.Optional(
        Type.String({
          minLength: 1,
          description: 'Team id or slug; needed when the credential reaches several teams',
        }),
      ),
      spaceId: Type.Optional(
        Nullable(Type.String({ minLength: 1, description: 'Bind to this space of the team (id or slug)' })),
      ),
      role: Type.Optional(Role),
      redirect: Type.Optional(Nullable(Redirect)),
    },
    { additionalProperties: false },
  ),
);

export const UpdateDomainBody = defineSchema(
  'UpdateDomainRequest',
  Type.Object(
    {
      spaceId: Type.Optional(
        Nullable(Type.String({ minLength: 1, description: 'Bind to this space; null unbinds' })),
      ),
      role: Type.Optional(Role),
      redirect: Type.Optional(Nullable(Redirect)),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
);

export const DomainPreflightBody = defineSchema(
  'DomainPreflightRequest',
  Type.Object(
    { hostname: Type.String({ minLength: 1, maxLength: 300, description: 'The hostname to check' }) },
    { additionalProperties: false },
  ),
);

export const DomainPreflightResponse = defineSchema(
  'DomainPreflight',
  DataEnvelope(
    Type.Object(
      {
        hostname: Type.String({ description: 'As people read it (U-labels)' }),
        asciiHostname: Type.String(),
        apex: Type.Boolean(),
        wildcard: Type.Boolean(),
        available: Type.Boolean({ description: 'False when the team already has it (see `existingId`)' }),
        existingId: Nullable(Type.String()),
        records: Type.Array(
          Type.Object(
            {
              purpose: Purpose,
              type: Type.String(),
              name: Type.String(),
              value: Nullable(Type.String()),
              note: Type.Optional(Type.String()),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  ),
);

export const TeamDomainSettingsResponse = defineSchema(
  'TeamDomainSettings',
  DataEnvelope(
    Type.Object(
      {
        teamId: Type.String(),
        wildcardEnabled: Type.Boolean({
          description: 'Whether the team may add wildcard domains (`*.example.com`); off by default',
        }),
        wildcardsSupported: Type.Boolean({
          description:
            'Whether this server can serve wildcard domains: it terminates no TLS, or it has a DNS-01 provider for their certificates',
        }),
        updatedAt: Nullable(DateTime),
      },
      { additionalProperties: false },
    ),
  ),
);

export const UpdateTeamDomainSettingsBody = defineSchema(
  'UpdateTeamDomainSettingsRequest',
  Type.Object(
    {
      wildcardEnabled: Type.Boolean({
        description: 'Let the team add wildcard domains (`*.example.com`): one leading `*.` label',
      }),
    },
    { additionalProperties: false },
  ),
);
