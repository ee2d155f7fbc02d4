const { runCli } = await import('./cli.mjs');
process.exit(await runCli(process.argv.slice(2)));
