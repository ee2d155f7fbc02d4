import { ConfigError, configSpec, flagsToEnv, loadConfig } from './config.ts';

const SERVER_HELP = `Usage: spaces server [--flag value …]

Starts the Spaces service (API and sites on one port). Every flag has an environment variable:

${configSpec.map((s) => `  --${s.flag.padEnd(20)} ${s.env.padEnd(26)} ${s.description} (default: ${s.default || 'none'})`).join('\n')}
`;

/** Entry of the `spaces` bin: `spaces server` runs the service; other commands are the client. */
export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'server') return runServer(rest);
  const { runCliAndExit } = await import('./cli/main.ts');
  await runCliAndExit(argv);
}

async function runServer(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(SERVER_HELP);
    return;
  }
  let config;
  try {
    config = loadConfig({ ...process.env, ...flagsToEnv(argv) });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`spaces server: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const { tuneGcForCpus } = await import('./gc.ts');
  tuneGcForCpus();
  const { buildServer } = await import('./server.ts');
  const server = await buildServer(config);
  const { port } = await server.listen();
  const b = server.bootstrap;
  if (b) {
    const key = config.bootstrapToken ? '(the value of SPACES_BOOTSTRAP_TOKEN)' : b.apiKey;
    process.stdout.write(
      [
        '',
        'Spaces is set up. This is shown only once — keep it somewhere safe.',
        `  Sign in:  ${config.publicUrl}  as ${b.email}  with password ${b.password}`,
        `  API key:  ${key}   (team "${b.teamSlug}", preset team_admin)`,
        `  Try it:   curl -H "Authorization: Bearer <API key>" ${config.publicUrl}/v1/teams`,
        '',
      ].join('\n'),
    );
  }
  process.stdout.write(
    `Spaces listening on ${config.publicUrl} (port ${port}); sites at ${config.siteScheme}://<name>.${config.baseDomain}${config.sitePortSuffix}\n`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.services.log.info({ signal }, 'shutting down');
    await server.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
