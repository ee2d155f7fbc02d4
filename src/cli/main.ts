/** The client CLI. Until its commands land, it explains what exists. */
export async function runCli(argv: string[]): Promise<void> {
  const [command] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(
      'Usage: spaces <command>\n\nCommands:\n  server    run the Spaces service (see `spaces server --help`)\n',
    );
    return;
  }
  process.stderr.write(`spaces: unknown command "${command}". Run \`spaces --help\`.\n`);
  process.exitCode = 2;
}
