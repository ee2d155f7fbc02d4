import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable, PageEnvelope, SchemaRef } from './common.ts';
import { defineSchema } from './registry.ts';

const Ref = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'A branch or tag name (no leading `-`, spaces, `..` or control characters)',
});

export const BuildSourceInput = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('upload', {
          description: 'The answer says where to PUT a zip or .tar.gz of the source',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('git'),
        url: Type.String({
          minLength: 1,
          maxLength: 2048,
          description: 'An `https://` clone URL (public addresses only unless the server allows more)',
        }),
        ref: Type.Optional(Nullable(Ref)),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('connection', {
          description: 'The space’s repository connection (`ref` defaults to its production branch)',
        }),
        ref: Type.Optional(Nullable(Ref)),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'Where the build’s source comes from' },
);

export const CreateBuildBody = defineSchema(
  'CreateBuildBody',
  Type.Object(
    {
      source: Type.Optional(BuildSourceInput),
      ref: Type.Optional(
        Nullable({
          ...Ref,
          description:
            'Without `source`: the ref of the space’s repository connection to build (default: its production branch)',
        }),
      ),
      branch: Type.Optional(
        Nullable({
          ...Ref,
          description:
            'The branch the build is for: null is the production branch (the output goes `live`); any other branch goes to the `br-<slug>` preview channel. Absent: null, except for a connection build of a ref other than its production branch, which is that branch',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);

const Setting = Type.Object(
  {
    value: Type.Union([Type.String(), Type.Number(), Type.Null()]),
    source: Type.Union(
      ['space_config', 'repository', 'connection', 'detected', 'default'].map((s) => Type.Literal(s)),
    ),
  },
  { additionalProperties: false },
);

export const BuildStatus = Type.Union(
  [
    'waiting_for_source',
    'uploading_source',
    'queued',
    'running',
    'succeeded',
    'failed',
    'canceled',
    'skipped',
  ].map((s) => Type.Literal(s)),
);

export const Build = Type.Object(
  {
    id: Type.String(),
    spaceId: Type.String(),
    status: BuildStatus,
    source: Type.Object(
      {
        type: Type.Union(['upload', 'git', 'push', 'connection'].map((s) => Type.Literal(s))),
        url: Nullable(Type.String()),
        ref: Nullable(Type.String()),
        commitSha: Nullable(Type.String()),
      },
      { additionalProperties: false },
    ),
    branch: Nullable(Type.String()),
    channel: Nullable(Type.String({ description: '`live` or `br-<slug>`, once published' })),
    versionId: Nullable(Type.String()),
    settings: Nullable(
      Type.Record(Type.String(), Type.Union([Setting, Type.Record(Type.String(), Type.Unknown())]), {
        description:
          'Each setting the build ran with and where it came from; `detected` is what detection saw',
      }),
    ),
    error: Nullable(
      Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false }),
    ),
    cancelRequested: Type.Boolean(),
    retryOf: Nullable(Type.String()),
    logBytes: Type.Integer(),
    createdAt: DateTime,
    startedAt: Nullable(DateTime),
    finishedAt: Nullable(DateTime),
  },
  { additionalProperties: false },
);

export const UploadInstruction = Type.Object(
  {
    method: Type.Literal('PUT'),
    url: Type.String({ format: 'uri' }),
    contentTypes: Type.Array(Type.String()),
    description: Type.String(),
  },
  { additionalProperties: false },
);

export const BuildResponse = defineSchema('BuildResponse', DataEnvelope(Build));
export const BuildCreatedResponse = defineSchema(
  'BuildCreatedResponse',
  Type.Object(
    { $schema: SchemaRef, data: Build, upload: Nullable(UploadInstruction) },
    { additionalProperties: false },
  ),
);
export const BuildListResponse = defineSchema('BuildList', PageEnvelope(Build));
export const BuildLogLine = Type.Object(
  {
    id: Type.String(),
    stream: Type.Union([Type.Literal('stdout'), Type.Literal('stderr'), Type.Literal('system')]),
    line: Type.String(),
    createdAt: DateTime,
  },
  { additionalProperties: false },
);
export const BuildLogsResponse = defineSchema('BuildLogs', PageEnvelope(BuildLogLine));

export const BuildStatusChange = Type.Object(
  { id: Type.String(), status: BuildStatus, at: DateTime },
  { additionalProperties: false },
);
export const BuildEventsResponse = defineSchema(
  'BuildEvents',
  Type.Object(
    { $schema: SchemaRef, data: Type.Array(BuildStatusChange) },
    { additionalProperties: false, description: 'The states the build entered, oldest first' },
  ),
);

const Branch = { ...Ref, description: 'A branch name' };
const SettingText = Type.String({ minLength: 1, maxLength: 4096 });
const ConnectionFields = {
  cloneUrl: Type.String({
    minLength: 1,
    maxLength: 2048,
    description:
      'An `https://` clone URL without credentials (public addresses only unless the server’s `SPACES_GIT_ALLOW` allows more)',
  }),
  credential: Type.Union(
    [
      Type.Object(
        {
          token: Type.String({
            minLength: 1,
            maxLength: 4096,
            description: 'An HTTPS access token; write-only',
          }),
          username: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 255,
              pattern: '^[^:\\s]+$',
              description: 'The HTTP Basic user sent with the token (default `x-access-token`)',
            }),
          ),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ],
    {
      description:
        'Stored encrypted, never returned (`hasCredential` says whether there is one); null removes it',
    },
  ),
  defaultBranch: Nullable(Branch),
  productionBranch: Nullable({
    ...Branch,
    description: 'The branch whose builds go `live` (default: `defaultBranch`, else `main`)',
  }),
  appRoot: Nullable(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description:
        'The folder of the repository that is built (the build’s `rootDirectory` unless config says)',
    }),
  ),
  autoDeployProduction: Type.Boolean({
    description:
      'Pushes to the production branch (the space’s own remote: its default branch) build and go `live`; off: they are recorded as skipped builds',
  }),
  autoDeployPreviews: Type.Boolean({
    description:
      'Pushes to other branches build their `br-<slug>` previews; off: they are recorded as skipped builds',
  }),
  buildSettings: Type.Union(
    [
      Type.Object(
        {
          frameworkPreset: Type.Optional(Nullable(SettingText)),
          installCommand: Type.Optional(Nullable(SettingText)),
          buildCommand: Type.Optional(Nullable(SettingText)),
          outputDirectory: Type.Optional(Nullable(SettingText)),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ],
    {
      description:
        'Build settings kept on the connection (analyze’s `apply: "best"` writes them): below the space’s config and the repository’s `spaces.jsonc`, above detection; null: none',
    },
  ),
};
const Provider = Type.Literal('generic', {
  description: 'Where the repository is: `generic` (any git host by clone URL); git-host apps come later',
});

export const CreateRepositoryConnectionBody = defineSchema(
  'CreateRepositoryConnectionBody',
  Type.Object(
    {
      provider: Type.Optional(Provider),
      cloneUrl: ConnectionFields.cloneUrl,
      credential: Type.Optional(ConnectionFields.credential),
      defaultBranch: Type.Optional(ConnectionFields.defaultBranch),
      productionBranch: Type.Optional(ConnectionFields.productionBranch),
      appRoot: Type.Optional(ConnectionFields.appRoot),
      autoDeployProduction: Type.Optional(ConnectionFields.autoDeployProduction),
      autoDeployPreviews: Type.Optional(ConnectionFields.autoDeployPreviews),
      buildSettings: Type.Optional(ConnectionFields.buildSettings),
    },
    { additionalProperties: false },
  ),
);
export const UpdateRepositoryConnectionBody = defineSchema(
  'UpdateRepositoryConnectionBody',
  Type.Object(
    {
      cloneUrl: Type.Optional(ConnectionFields.cloneUrl),
      credential: Type.Optional(ConnectionFields.credential),
      defaultBranch: Type.Optional(ConnectionFields.defaultBranch),
      productionBranch: Type.Optional(ConnectionFields.productionBranch),
      appRoot: Type.Optional(ConnectionFields.appRoot),
      autoDeployProduction: Type.Optional(ConnectionFields.autoDeployProduction),
      autoDeployPreviews: Type.Optional(ConnectionFields.autoDeployPreviews),
      buildSettings: Type.Optional(ConnectionFields.buildSettings),
    },
    { additionalProperties: false },
  ),
);
export const RepositoryConnection = Type.Object(
  {
    spaceId: Type.String(),
    provider: Provider,
    cloneUrl: Type.String(),
    repository: Nullable(Type.String({ description: '`owner/name` at a git host; null for `generic`' })),
    hasCredential: Type.Boolean(),
    defaultBranch: Nullable(Type.String()),
    productionBranch: Type.String({ description: 'The branch whose builds go `live`' }),
    appRoot: Nullable(Type.String()),
    autoDeployProduction: ConnectionFields.autoDeployProduction,
    autoDeployPreviews: ConnectionFields.autoDeployPreviews,
    buildSettings: ConnectionFields.buildSettings,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { additionalProperties: false },
);
export const RepositoryConnectionResponse = defineSchema(
  'RepositoryConnectionResponse',
  DataEnvelope(RepositoryConnection),
);
export const AnalyzeRepositoryBody = defineSchema(
  'AnalyzeRepositoryBody',
  Type.Object(
    {
      ref: Type.Optional(Nullable({ ...Ref, description: 'Default: the production branch' })),
      apply: Type.Optional(
        Nullable(
          Type.Literal('best', {
            description:
              '"apply best": save the top-ranked candidate on the connection (its folder as `appRoot`, its framework, commands and output folder as `buildSettings`)',
          }),
        ),
      ),
    },
    { additionalProperties: false },
  ),
);
const BuildCandidate = Type.Object(
  {
    appRoot: Type.String({ description: 'The folder, relative to the repository (`.`: its root)' }),
    framework: Type.String(),
    packageManager: Nullable(Type.String()),
    installCommand: Nullable(Type.String()),
    buildCommand: Nullable(Type.String()),
    outputDirectory: Type.String(),
    score: Type.Integer(),
    reasons: Type.Array(Type.String(), { description: 'Each point given or taken, e.g. `+50 uses vite`' }),
  },
  { additionalProperties: false },
);
export const RepositoryAnalysisResponse = defineSchema(
  'RepositoryAnalysis',
  DataEnvelope(
    Type.Object(
      {
        ref: Type.String(),
        commitSha: Nullable(Type.String()),
        settings: Type.Record(Type.String(), Setting, {
          description: 'What a build at this ref would run with, each with where it comes from',
        }),
        detected: Type.Object(
          {
            framework: Type.String(),
            packageManager: Nullable(Type.String()),
            installCommand: Nullable(Type.String()),
            buildCommand: Nullable(Type.String()),
            outputDirectory: Type.String(),
          },
          { additionalProperties: false, description: 'What detection alone saw' },
        ),
        candidates: Type.Array(BuildCandidate, {
          description:
            'Every folder of the repository that could be built (monorepos: each app), best first, at most 20',
        }),
        applied: Type.Union([BuildCandidate, Type.Null()], {
          description: 'The candidate saved on the connection by `apply: "best"`; null when not asked',
        }),
      },
      { additionalProperties: false },
    ),
  ),
);
