// Writes docs/cli/reference.md from the CLI's commander definitions.
import fs from 'node:fs';
import path from 'node:path';
import { renderReference } from '../src/cli/reference.ts';

const file = path.resolve(import.meta.dirname, '../docs/cli/reference.md');
fs.mkdirSync(path.dirname(file), { recursive: true });
fs.writeFileSync(file, renderReference());
process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
