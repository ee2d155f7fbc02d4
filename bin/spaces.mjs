#!/usr/bin/env node
// The `spaces` bin: `spaces server` runs the service, every other command is the client CLI.
// TypeScript sources are loaded through tsx so a clone runs without a build step; the client CLI runs
// from a bundle of its sources that is rebuilt when they change (see cli-bundle.mjs).
const argv = process.argv.slice(2);
if (argv[0] !== 'server') {
  const { loadCliBundle } = await import('./cli-bundle.mjs');
  const cli = await loadCliBundle();
  if (cli) {
    const code = await cli.runCli(argv);
    // Exit now: a stray handle (a keep-alive socket, a spinner) must not keep a finished command alive.
    // Output to a pipe is written asynchronously: let it drain first, or a long listing is cut off.
    await cli.flushOutput();
    process.exit(code);
  }
}
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('../src/main.ts');
await main(argv);
