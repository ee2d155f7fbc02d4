import { Type } from '@sinclair/typebox';
import { DOC_CATEGORIES, DOC_TIERS } from '../domain/docs/types.ts';
import { DataEnvelope, Nullable } from './common.ts';
import { defineSchema } from './registry.ts';

export const DocCategory = Type.Union(
  DOC_CATEGORIES.map((c) => Type.Literal(c)),
  { description: 'guide, cli, api, recipe, workflow or error' },
);
export const DocTier = Type.Union(
  DOC_TIERS.map((t) => Type.Literal(t)),
  { description: 'essential, full or reference' },
);

export const DocsIndexEntry = defineSchema(
  'DocsIndexEntry',
  Type.Object(
    {
      slug: Type.String({ description: 'Stable topic id' }),
      title: Type.String(),
      summary: Type.String(),
      category: DocCategory,
      tier: DocTier,
      keywords: Type.Array(Type.String()),
      url: Type.String({ format: 'uri', description: 'Canonical documentation URL' }),
      links: Type.Object(
        {
          doc: Type.String({ format: 'uri' }),
          self: Type.String({ description: 'API-relative link `/v1/docs/pages/{slug}`' }),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false, description: 'Documentation index entry' },
  ),
);

export const DocsIndexQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 1000, description: 'Free-text filter; trimmed' })),
    tier: Type.Optional({ ...DocTier, default: 'essential' }),
    category: Type.Optional(DocCategory),
  },
  { additionalProperties: false },
);

export const DocsIndexResponse = defineSchema(
  'DocsIndexResponse',
  DataEnvelope(
    Type.Object(
      {
        tier: DocTier,
        query: Nullable(Type.String()),
        category: Nullable(DocCategory),
        count: Type.Integer({ minimum: 0 }),
        entries: Type.Array(DocsIndexEntry),
      },
      { additionalProperties: false },
    ),
  ),
);

export const DocsPage = defineSchema(
  'DocsPage',
  Type.Object(
    {
      ...DocsIndexEntry.properties,
      body: Type.String({ description: 'The page as Markdown' }),
    },
    { additionalProperties: false },
  ),
);

export const DocsPageResponse = defineSchema('DocsPageResponse', DataEnvelope(DocsPage));

export const DocsSearchHit = defineSchema(
  'DocsSearchHit',
  Type.Object(
    {
      ...DocsIndexEntry.properties,
      score: Type.Number({ description: 'Relevance; higher is better' }),
      excerpt: Type.String({ description: 'A short plain-text passage around the first match' }),
    },
    { additionalProperties: false },
  ),
);

export const DocsSearchResponse = defineSchema(
  'DocsSearchResponse',
  DataEnvelope(
    Type.Object(
      {
        query: Nullable(Type.String()),
        tier: DocTier,
        category: Nullable(DocCategory),
        count: Type.Integer({ minimum: 0 }),
        page: Nullable(DocsPage),
        results: Type.Array(DocsSearchHit),
      },
      { additionalProperties: false },
    ),
  ),
);
