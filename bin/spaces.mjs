#!/usr/bin/env node
// The `spaces` bin: `spaces server` runs the service and `spaces admin …` works on its data directly;
// every other command is the client CLI.
// Both run from bundles of their TypeScript sources, rebuilt whenever a source changes (see
// bundle.mjs, server-bundle.mjs, cli-bundle.mjs), so a clone runs without a build step and still
// starts fast. When a bundle can't be had, the sources are loaded through tsx.
const argv = process.argv.slice(2);
const server = argv[0] === 'server' || argv[0] === 'admin';
const bundled = server
  ? await (await import('./server-bundle.mjs')).loadServerBundle()
  : await (await import('./cli-bundle.mjs')).loadCliBundle();
if (bundled && server) await bundled.main(argv);
else if (bundled) await bundled.runCliAndExit(argv);
else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/main.ts');
  await main(argv);
}
