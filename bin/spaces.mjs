#!/usr/bin/env node
// The `spaces` bin: `spaces server` runs the service and `spaces admin …` works on its data directly;
// every other command is the client CLI.
// TypeScript sources are loaded through tsx so a clone runs without a build step; the client CLI runs
// from a bundle of its sources that is rebuilt when they change (see cli-bundle.mjs).
const argv = process.argv.slice(2);
if (argv[0] !== 'server' && argv[0] !== 'admin') {
  const { loadCliBundle } = await import('./cli-bundle.mjs');
  const cli = await loadCliBundle();
  if (cli) await cli.runCliAndExit(argv);
}
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('../src/main.ts');
await main(argv);
