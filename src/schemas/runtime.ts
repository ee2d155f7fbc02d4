import { type Static, Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime } from './common.ts';
import { defineSchema } from './registry.ts';
import { RUNTIME_CAPABILITIES } from './space-config.ts';

/** What a space's live version runs (behaviour §9 "Status from version metadata"). */
export const RuntimeStatus = defineSchema(
  'RuntimeStatus',
  Type.Object(
    {
      kind: Type.Literal('functions'),
      spaceId: Type.String(),
      versionId: Type.String({ description: 'The live version whose runtime this is' }),
      entry: Type.String({
        description: 'The entry module (`handler.ts`, `_worker.js`) or the route directory (`functions`)',
      }),
      entryKind: Type.Union(
        ['declared', 'adapter', 'handler', 'functions'].map((k) => Type.Literal(k)),
        {
          description:
            'How the entry was found: declared in `runtime.entry`, a framework adapter’s `_worker.js`, a root `handler.*`, or route modules under `functions/`',
        },
      ),
      digest: Type.String({ description: 'sha256 of the bundled ES module' }),
      size: Type.Integer({ minimum: 0, description: 'Bytes of the bundle (at most 8 MiB)' }),
      compatibilityDate: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' }),
      capabilities: Type.Array(Type.Union(RUNTIME_CAPABILITIES.map((c) => Type.Literal(c)))),
      routes: Type.Array(Type.String(), {
        description:
          'Paths the worker answers when no file does (`/api/hello`, `/users/:id`, `/files/*`; `/*` is every path)',
      }),
      createdAt: DateTime,
    },
    { additionalProperties: false },
  ),
);
export type RuntimeStatus = Static<typeof RuntimeStatus>;

export const RuntimeStatusResponse = defineSchema('RuntimeStatusResponse', DataEnvelope(RuntimeStatus));
