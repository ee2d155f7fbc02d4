#!/usr/bin/env node
// The `spaces` bin: `spaces server` runs the service, every other command is the client CLI.
// TypeScript sources are loaded through tsx so a clone runs without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
await main(process.argv.slice(2));
