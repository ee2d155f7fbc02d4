// Regenerates the typed SDK's generated half from this server's own OpenAPI document: src/sdk/openapi.json
// (the document, as GET /v1/openapi.json answers it with the default public URL) and src/sdk/schema.ts
// (its types, by openapi-typescript). test/sdk/sdk.test.ts fails when either is stale.
import fs from 'node:fs';
import path from 'node:path';
import { renderSdk } from '../src/sdk/generate.ts';

const dir = path.resolve(import.meta.dirname, '../src/sdk');
const { openapi, types } = await renderSdk();
fs.writeFileSync(path.join(dir, 'openapi.json'), openapi);
fs.writeFileSync(path.join(dir, 'schema.ts'), types);
process.stdout.write('wrote src/sdk/openapi.json, src/sdk/schema.ts\n');
