import fs from 'node:fs';
import { systemClock } from './clock.ts';
import { ConfigError, flagsToEnv, loadConfig } from './config.ts';
import { ensureMainTenant, resetOwner } from './domain/accounts/bootstrap.ts';
import { AccountService } from './domain/accounts/service.ts';
import { TeamService } from './domain/teams/service.ts';
import { migrate, openDatabase } from './store/db.ts';
import { Store } from './store/repos/index.ts';

const HELP = `Usage: spaces admin reset-owner [--api-key] [--data-dir <dir> | --database-url <url>]

Works on the server's data directly (not over HTTP), so it needs what \`spaces server\` needs: the
same SPACES_DATA_DIR / SPACES_DATABASE_URL (or --data-dir / --database-url). It may run while the
server runs.

  reset-owner   Give the owner account a new password and print it; signs the owner out everywhere.
    --api-key   Also create and print a new owner API key (team_admin, for the owner's first team).
`;

/** `spaces admin …`: operator commands that run next to the data, for when no credential is left. */
export async function runAdmin(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || rest.includes('--help')) {
    process.stdout.write(HELP);
    return;
  }
  if (command !== 'reset-owner') return usage(`unknown admin command "${command}"`);
  const apiKey = rest.includes('--api-key');
  let config;
  try {
    config = loadConfig({ ...process.env, ...flagsToEnv(rest.filter((a) => a !== '--api-key')) });
  } catch (err) {
    if (err instanceof ConfigError) return usage(err.message);
    throw err;
  }
  if (config.databaseUrl.startsWith('sqlite:')) {
    const file = config.databaseUrl.slice('sqlite:'.length);
    if (!fs.existsSync(file)) {
      return fatal(
        `no database at ${file}. Point SPACES_DATA_DIR (--data-dir) or SPACES_DATABASE_URL at the server's data.`,
      );
    }
  }
  const database = await openDatabase(config.databaseUrl);
  try {
    await migrate(database);
    const store = new Store(database);
    const tenantId = await ensureMainTenant(store, systemClock);
    const teams = new TeamService(store, systemClock);
    const accounts = new AccountService(store, systemClock, teams, async () => tenantId);
    const reset = await resetOwner(store, accounts, { apiKey });
    if (!reset) {
      return fatal(
        'there is no owner account yet: start the server once (`spaces server`); it creates one and prints how to sign in.',
      );
    }
    const lines = [
      `New password for ${reset.email}: ${reset.password}`,
      'Every session of the owner was signed out; sign in again with this password.',
    ];
    if (reset.apiKey) {
      lines.push(
        `New API key: ${reset.apiKey.token}   (team "${reset.apiKey.teamSlug}", preset team_admin)`,
        'Earlier API keys keep working; revoke the ones you no longer trust (DELETE /v1/account/api-keys/{keyId}).',
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await database.close();
  }
}

function usage(message: string): never {
  process.stderr.write(`spaces admin: ${message}\n\n${HELP}`);
  process.exit(2);
}

function fatal(message: string): never {
  process.stderr.write(`spaces admin: ${message}\n`);
  process.exit(1);
}
