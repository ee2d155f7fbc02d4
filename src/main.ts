import {
  type Config,
  ConfigError,
  cliLoginCommand,
  configSpec,
  flagsToEnv,
  loadConfig,
  StartupError,
} from './config.ts';
import type { BootstrapResult } from './domain/accounts/bootstrap.ts';

const SERVER_HELP = `Usage: spaces server [--flag value …]

Starts the Spaces service (API and sites on one port). Every flag has an environment variable:

${configSpec.map((s) => `  --${s.flag.padEnd(20)} ${s.env.padEnd(26)} ${s.description} (default: ${s.default || 'none'})`).join('\n')}

Lost the owner's password or API key? \`spaces admin reset-owner --help\`.
`;

/**
 * Entry of the `spaces` bin: `spaces server` runs the service, `spaces admin …` works on its data
 * directly (no HTTP); other commands are the client.
 */
export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'server') return runServer(rest);
  if (command === 'admin') {
    const { runAdmin } = await import('./admin.ts');
    return runAdmin(rest);
  }
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
  // A port in use is said before the (slow) loading of everything else, and before anything is
  // created in the data directory. The listen below still decides: the port may be taken meanwhile.
  if (config.port !== 0) {
    const why = listenFailure(await probePort(config.port, config.host), config.port, config.host);
    if (why) {
      process.stderr.write(`spaces server: ${why}\n`);
      process.exit(1);
    }
  }
  const { tuneGcForCpus } = await import('./v8-flags.ts');
  tuneGcForCpus();
  const { buildServer } = await import('./server.ts');
  let server: Awaited<ReturnType<typeof buildServer>>;
  try {
    server = await buildServer(config);
  } catch (err) {
    if (!(err instanceof StartupError)) throw err;
    process.stderr.write(`spaces server: ${err.message}\n`);
    process.exit(1);
  }
  // Before the port is bound: a signal from the moment the banner shows stops the server gracefully.
  const { shutdownOnSignal } = await import('./shutdown.ts');
  const onSignal = shutdownOnSignal({
    // Half the time for requests and jobs to finish, the rest for closing the stores.
    close: () => server.close({ graceMs: config.shutdownTimeoutMs / 2 }),
    timeoutMs: config.shutdownTimeoutMs,
    drainMs: config.drainMs,
    beginDrain: () => {
      server.services.lifecycle.draining = true;
    },
    log: server.services.log,
    exit: (code) => process.exit(code),
  });
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let port: number;
  try {
    ({ port } = await server.listen());
  } catch (err) {
    const why = listenFailure(err as NodeJS.ErrnoException, config.port, config.host);
    if (!why) throw err;
    // Nothing was created that needs the listener: the owner account (and its one-time
    // credentials) is made only after the port is bound, so the next start still prints them.
    await server.close().catch(() => {});
    process.stderr.write(`spaces server: ${why}\n`);
    process.exit(1);
  }
  process.stdout.write(
    `Spaces listening on ${config.publicUrl} (port ${port}); sites at ${config.siteScheme}://<name>.${config.baseDomain}${config.sitePortSuffix}\n`,
  );
  // Last, once everything is up, so start-up lines don't push it out of sight.
  if (server.bootstrap) process.stdout.write(firstStartBanner(server.bootstrap, config));
}

/** Listens on the port for a moment: the error a listen there gets now, or null. */
async function probePort(port: number, host: string): Promise<NodeJS.ErrnoException | null> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/** One line saying why the port can't be used and which setting changes it; null for other errors. */
function listenFailure(err: NodeJS.ErrnoException | null, port: number, host: string): string | null {
  const change = 'choose another with --port <n> (or PORT=<n>)';
  switch (err?.code) {
    case 'EADDRINUSE':
      return `port ${port} is already in use on ${host} (another Spaces, or another program); stop it or ${change}.`;
    case 'EACCES':
      return `not allowed to listen on port ${port} on ${host} (ports below 1024 need privileges); ${change}.`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine; choose another with --host <address> (or HOST=<address>).`;
    default:
      return null;
  }
}

/** Printed once, on the first start of an empty database. */
function firstStartBanner(b: BootstrapResult, config: Config): string {
  const key = config.bootstrapToken ? '(the value of SPACES_BOOTSTRAP_TOKEN)' : b.apiKey;
  return [
    '',
    'Spaces is set up. This is shown only once — keep it somewhere safe.',
    `  Sign in:  ${config.publicUrl}/  as ${b.email}  with password ${b.password}`,
    `  API key:  ${key}   (team "${b.teamSlug}", preset team_admin)`,
    `  Try it:   curl -H "Authorization: Bearer <API key>" ${config.publicUrl}/v1/account`,
    `  CLI:      run \`npm link\` once in this clone, then \`${cliLoginCommand(config.publicUrl)}\` and \`spaces publish <dir>\``,
    '  Lost it?  `spaces admin reset-owner` (on this machine) sets a new password; see docs/guides/self-hosting.md',
    '',
    '',
  ].join('\n');
}
