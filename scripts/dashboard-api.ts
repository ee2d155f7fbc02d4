// Writes web/src/api/openapi.d.ts, the dashboard's typed client's types, from this server's own
// OpenAPI document (`GET /v1/openapi.json`), with openapi-typescript. test/dashboard/build.test.ts
// checks the committed file is what this produces.
import fs from 'node:fs';
import path from 'node:path';
import { renderDashboardApiTypes } from '../web/build/openapi-types.ts';

const file = path.resolve(import.meta.dirname, '../web/src/api/openapi.d.ts');
fs.writeFileSync(file, await renderDashboardApiTypes());
process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
