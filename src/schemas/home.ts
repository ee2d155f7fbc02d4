import { Type } from '@sinclair/typebox';
import { DataEnvelope } from './common.ts';
import { defineSchema } from './registry.ts';

/** `GET /` for programs: what this server is and where to go next. */
export const ServiceIndexResponse = defineSchema(
  'ServiceIndexResponse',
  DataEnvelope(
    Type.Object(
      {
        name: Type.String(),
        description: Type.String(),
        apiVersion: Type.String(),
        links: Type.Object(
          {
            openapi: Type.String({ description: 'The OpenAPI 3.1 document of the API' }),
            docs: Type.String({ description: 'Documentation (HTML; Markdown when preferred)' }),
            docsIndex: Type.String({ description: 'The machine-readable documentation index' }),
            llms: Type.String({ description: 'llms.txt: the essential pages for language models' }),
            signIn: Type.String({ description: '`POST` e-mail and password for a session token' }),
            account: Type.String({ description: 'Who the credential is' }),
            publish: Type.String({ description: '`POST` files to publish them (no credential: anonymous)' }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  ),
);
