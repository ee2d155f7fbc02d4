import { Argument, Command, Option } from 'commander';
import type { Context, GlobalOptions } from './context.ts';
import { addRuntimeCommands } from './program-runtime.ts';

/** A command's implementation: gets the context, its positional arguments and its own options. */
export type Action = (ctx: Context, args: string[], opts: Record<string, unknown>) => Promise<void>;
export type Runner = (action: Action) => (...args: unknown[]) => Promise<void>;

export const CLI_VERSION = '0.1.0';
const VERSION_REF = '`ver_…`, `v12`, `12` or `latest`';
export const ACCESS_LEVELS = ['public', 'team', 'private'] as const;
const accessOption = (what: string) => new Option('--access <access>', what).choices(ACCESS_LEVELS);

/**
 * Every command, its arguments and flags. Built without side effects so the reference docs and the
 * shell completions are generated from the same definitions the CLI parses with.
 */
export function buildProgram(run: Runner, actions: Record<string, Action>): Command {
  const program = new Command('spaces')
    .description('Publish and manage sites on a Spaces server.')
    // No commander version option: it would swallow `download --version`; main answers `spaces -V`.
    .addOption(new Option('--api-url <url>', 'API base URL').env('SPACES_API_URL'))
    .addOption(new Option('--team <team>', 'team id or slug').env('SPACES_TEAM'))
    .addOption(new Option('--space <space>', 'space id, slug or live URL').env('SPACES_SPACE'))
    .addOption(new Option('--token <token>', 'credential (API key or token)').env('SPACES_TOKEN'))
    .addOption(new Option('--profile <name>', 'named profile (server + credential)').env('SPACES_PROFILE'))
    .option('--json', 'machine-readable output on stdout only')
    .option('--stream', 'with --json: JSON Lines progress events, then a `result` (or `error`) event')
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      '\nRun `spaces -V` for the version. Exit codes: 0 ok, 1 error, 2 usage, 3 auth, 4 not found, 5 conflict, 6 limits.',
    )
    .showSuggestionAfterError(true)
    .enablePositionalOptions(false);

  const a = (name: string) => {
    const fn = actions[name];
    if (!fn) throw new Error(`no action for ${name}`);
    return run(fn);
  };

  // Account
  program
    .command('login')
    .description(
      'Log in in the browser (renews itself), with --device from another device, or store an API key given with --token',
    )
    .option('--device', 'show a code to enter on any device instead (no browser here; lasts 1 hour)')
    .option('--no-browser', 'print the URL to open instead of opening a browser')
    .action(a('login'));
  program
    .command('logout')
    .description('Forget the stored credential (and revoke it when the CLI created it)')
    .action(a('logout'));
  program.command('whoami').description('Show the account and credential in use').action(a('whoami'));
  program
    .command('status')
    .description('Show profile, API URL, account, team and the linked space')
    .action(a('status'));
  program
    .command('switch')
    .argument('<team>', 'team id or slug')
    .description('Make a team the default for this profile')
    .action(a('switch'));
  program
    .command('profiles')
    .description('List profiles (server + credential); --profile NAME selects one')
    .action(a('profiles'));

  program
    .command('mcp')
    .description(
      'Run an MCP server on stdin/stdout for agent hosts (tools: publish, versions, rollback, config, docs), with this profile’s credential',
    )
    .action(a('mcp'));

  // Publishing
  program
    .command('publish')
    .alias('deploy')
    .argument('[path]', 'directory, single file, or .zip / .tar.gz archive (default: .)')
    .description('Publish files as a new version: creates the space on first run, uploads only what changed')
    .addOption(
      new Option('--target <target>', 'production goes live; preview does not').choices([
        'production',
        'preview',
      ]),
    )
    .option('-m, --message <text>', 'a note kept with the version')
    .option('--slug <slug>', 'slug of a space created by this publish')
    .option('--name <title>', 'title of a space created by this publish')
    .addOption(
      new Option('--spa <mode>', 'single-page app fallback to /index.html')
        .choices(['auto', 'true', 'false'])
        .default('auto'),
    )
    .addOption(accessOption('who can see the site (a new space starts with its team’s default)'))
    .option('--dry-run', 'show what would be uploaded; change nothing')
    .option('--idempotency-key <key>', 'make a retried publish safe')
    .option(
      '-y, --yes',
      'publish even when it removes more than half of the live version’s files (asked on a terminal)',
    )
    .action(a('publish'));
  program
    .command('init')
    .description('Write spaces.jsonc, the site’s settings file, with a $schema for editor completion')
    .option('--force', 'overwrite an existing spaces.jsonc')
    .action(a('init'));
  program
    .command('link')
    .argument('[space]', 'space id, slug or live URL')
    .description('Link this directory to a space (.spaces/state.json)')
    .action(a('link'));
  program.command('unlink').description('Remove the link of this directory').action(a('unlink'));
  program
    .command('inspect')
    .argument('[space]', 'space id, slug or live URL')
    .description('Show a space: URLs, channels, settings')
    .action(a('inspect'));
  program
    .command('open')
    .argument('[space]', 'space id, slug or live URL')
    .description('Print the live URL (and open it in a browser on a terminal)')
    .action(a('open'));

  const versions = program.command('versions').description('Versions of a space');
  versions
    .command('ls')
    .description('List versions, newest first')
    .option('--limit <n>', 'how many', '20')
    .action(a('versions.ls'));
  versions
    .command('get')
    .argument('<version>', VERSION_REF)
    .description('Show one version')
    .action(a('versions.get'));
  versions
    .command('rm')
    .argument('<version>', VERSION_REF)
    .description('Delete a version (not one a channel points at)')
    .action(a('versions.rm'));
  versions
    .command('files')
    .argument('[version]', VERSION_REF, 'latest')
    .description('List the files of a version')
    .action(a('versions.files'));
  program
    .command('promote')
    .argument('<version>', VERSION_REF)
    .option('--channel <name>', 'channel to move', 'live')
    .description('Point a channel at a version')
    .action(a('promote'));
  program
    .command('rollback')
    .argument('[version]', `${VERSION_REF}; default: the version live before the current one`)
    .option('--channel <name>', 'channel to move', 'live')
    .description('Put an earlier version live again')
    .action(a('rollback'));
  const channels = program.command('channels').description('Channels (named pointers to versions)');
  channels.command('ls').description('List channels').action(a('channels.ls'));
  channels
    .command('history')
    .argument('[channel]', 'channel name', 'live')
    .option('--limit <n>', 'how many moves', '20')
    .description('Moves of a channel, newest first')
    .action(a('channels.history'));
  program
    .command('diff')
    .argument('<from>', VERSION_REF)
    .argument('<to>', VERSION_REF)
    .description('Paths added, changed and removed from one version to another')
    .action(a('diff'));
  program
    .command('download')
    .option('--version <version>', VERSION_REF, 'latest')
    .option('-o, --output <dir>', 'write the files into this directory (this or --archive is required)')
    .option('--archive <file>', 'save the version as one .tar.gz instead (`-` for stdout)')
    .description('Download a version’s files: into a directory (-o DIR) or as a .tar.gz (--archive FILE)')
    .action(a('download'));

  // Spaces
  const spaces = program.command('spaces').description('Spaces you can reach');
  spaces
    .command('ls')
    .option('--limit <n>', 'how many', '50')
    .addOption(
      new Option('--sort <order>', 'order: newest first unless told (a leading - reverses)').choices([
        '-created',
        'created',
        'name',
        '-name',
        '-updated',
        'updated',
      ]),
    )
    .option('--search <text>', 'only spaces whose title or slug contains it (ignoring case)')
    .description('List spaces')
    .action(a('spaces.ls'));
  spaces
    .command('create')
    .option('--slug <slug>', 'the space’s name in its hostname')
    .option('--name <title>', 'title')
    .option('--link', 'link this directory to the new space')
    .addOption(accessOption('who can see the site (default: the team’s default)'))
    .description('Create an empty space')
    .action(a('spaces.create'));
  spaces
    .command('rename')
    .argument('<slug>', 'new slug')
    .description('Rename the space (the old hostname keeps working)')
    .action(a('spaces.rename'));
  spaces
    .command('rm')
    .argument('[space]', 'space id, slug or live URL')
    .description('Delete a space')
    .action(a('spaces.rm'));
  spaces
    .command('claim')
    .option('--key <key>', 'space key (sfc_…); default: the one kept by an anonymous publish here')
    .description('Claim an anonymous space into your team')
    .action(a('spaces.claim'));

  // Teams
  const teams = program.command('teams').description('Teams');
  teams.command('ls').description('List your teams').action(a('teams.ls'));
  teams
    .command('create')
    .argument('<name>', 'team name')
    .option('--slug <slug>', 'team slug')
    .description('Create a team')
    .action(a('teams.create'));
  teams
    .command('members')
    .argument('[team]', 'team id or slug (default: --team)')
    .description('List members')
    .action(a('teams.members'));
  teams
    .command('invite')
    .argument('<email>', 'who to invite')
    .addOption(
      new Option('--role <role>', 'their role').choices(['owner', 'admin', 'member']).default('member'),
    )
    .description('Invite someone to the team')
    .action(a('teams.invite'));
  teams
    .command('set-default-access')
    .addArgument(new Argument('<access>', 'public, team or private').choices(ACCESS_LEVELS))
    .description('Who can see the team’s new spaces unless a publish says otherwise (--team picks the team)')
    .action(a('teams.set-default-access'));

  // API keys
  const keys = program.command('api-keys').description('API keys of your account');
  keys
    .command('create')
    .argument('<name>', 'a name to recognise the key by')
    .option('--preset <preset>', 'scope preset (e.g. space_publisher, team_admin)')
    .option('--expires-at <iso>', 'expiry (ISO 8601)')
    .description('Create a key (shown once)')
    .action(a('api-keys.create'));
  keys.command('ls').description('List keys').action(a('api-keys.ls'));
  keys.command('revoke').argument('<id>', 'key id').description('Revoke a key').action(a('api-keys.revoke'));

  // Custom domains
  const domains = program.command('domains').description('Custom domains of your teams');
  domains
    .command('add')
    .argument('<hostname>', 'e.g. www.example.com')
    .option('--unbound', 'add to the team’s inventory without binding it to the space')
    .option('--redirect-to <host>', 'redirect every request to this host instead of serving the space')
    .addOption(
      new Option('--status <code>', 'redirect status').choices(['301', '302', '307', '308']).default('308'),
    )
    .description('Add a domain, bound to the space (--space or the link); prints the DNS records to create')
    .action(a('domains.add'));
  domains
    .command('ls')
    .option('--all', 'every domain of the team, bound or not')
    .description('List the domains bound to the space (or --all of the team’s)')
    .action(a('domains.ls'));
  domains
    .command('verify')
    .argument('<domain>', 'hostname or domain id')
    .description('Check the domain’s DNS records now')
    .action(a('domains.verify'));
  domains
    .command('rm')
    .argument('<domain>', 'hostname or domain id')
    .description('Unbind the domain and remove it from the team (asks first; --yes to skip)')
    .action(a('domains.rm'));

  // Builds and the git remote
  program
    .command('build')
    .argument('[dir]', 'the source folder to upload and build (default: the current folder)')
    .option('--ref <ref>', 'build this branch or tag of the space’s repository connection instead')
    .option('--connection', 'build the repository connection’s production branch')
    .option('--branch <branch>', 'publish for this branch (its br-<slug> preview) instead of production')
    .option('--follow', 'stream the log until the build ends; the exit code says how it ended')
    .description('Start a build of a source folder (or of the repository connection) and publish its output')
    .action(a('build'));
  const builds = program.command('builds').description('Builds of a space');
  builds
    .command('ls')
    .option('--limit <n>', 'how many', '20')
    .description('List the space’s builds, newest first')
    .action(a('builds.ls'));
  builds
    .command('show')
    .argument('<id>', 'build id')
    .description('Show a build and the states it went through')
    .action(a('builds.show'));
  builds
    .command('logs')
    .argument('<id>', 'build id')
    .option('--follow', 'stream new lines until the build ends')
    .description('Print a build’s log, oldest line first')
    .action(a('builds.logs'));
  builds
    .command('cancel')
    .argument('<id>', 'build id')
    .description('Cancel a build (kills its processes if it is running)')
    .action(a('builds.cancel'));
  builds
    .command('retry')
    .argument('<id>', 'a finished build’s id')
    .option('--follow', 'stream the new build’s log; the exit code says how it ended')
    .description('Run a finished build again with the same source and target')
    .action(a('builds.retry'));
  builds
    .command('analyze')
    .option('--ref <ref>', 'the branch or tag of the repository connection to look at')
    .option('--apply', 'save the best candidate (app root, framework, commands, output) on the connection')
    .description(
      'Rank the repository connection’s build candidates (each app of a monorepo) and the settings a build would use',
    )
    .action(a('builds.analyze'));
  const gitCmd = program.command('git').description('The space’s git remote');
  gitCmd
    .command('remote')
    .option('--add', 'add (or update) the remote in the git repository of the current folder')
    .option('--name <name>', 'the remote’s name', 'spaces')
    .description('Print the space’s git remote URL and how to push to it')
    .action(a('git.remote'));
  // Webhooks
  const hooks = program.command('webhooks').description('Signed webhooks of your team');
  hooks
    .command('add')
    .argument('<url>', 'https URL the events are POSTed to')
    .option('--events <list>', 'comma-separated filters: `*`, `version.ready`, `version.*` (default: all)')
    .option('--description <text>', 'what the webhook is for')
    .description('Add a webhook to the team (--team); prints its signing secret once')
    .action(a('webhooks.add'));
  hooks.command('ls').description('List the team’s webhooks').action(a('webhooks.ls'));
  hooks
    .command('rm')
    .argument('<id>', 'webhook id (whk_…)')
    .description('Delete a webhook (asks first; --yes to skip)')
    .action(a('webhooks.rm'));
  hooks
    .command('rotate')
    .argument('<id>', 'webhook id (whk_…)')
    .option('--expire-now', 'stop signing with the previous secret at once (default: 24 h overlap)')
    .description('Rotate the signing secret; prints the new one once')
    .action(a('webhooks.rotate'));
  hooks
    .command('deliveries')
    .argument('<id>', 'webhook id (whk_…)')
    .description('List a webhook’s recent deliveries')
    .action(a('webhooks.deliveries'));
  hooks
    .command('redeliver')
    .argument('<deliveryId>', 'delivery id (whd_…)')
    .description('Send a delivery’s event again')
    .action(a('webhooks.redeliver'));

  // Site access
  const acc = program
    .command('access')
    .description('Who may see a space’s site: grants, share links, credentials');
  const scoped = (c: Command) =>
    c
      .option('--paths <globs>', 'comma-separated path globs (`/docs/**`, `!/docs/internal/**`)')
      .option('--target <target>', '`live`, `all-versions`, `version:<id>` or `branch:<name>`')
      .option('--expires <when>', 'an instant after which it stops working')
      .option('--max-uses <n>', 'how many sessions (or machine requests) it allows')
      .option('--ip <ranges>', 'comma-separated IP addresses or CIDR ranges');
  acc.command('grants').description('List the space’s grants').action(a('access.grants'));
  scoped(acc.command('grant').argument('<who>', '`public`, `team`, an e-mail address or a user id'))
    .option('--role <role>', 'viewer, commenter, editor or manager')
    .description('Add a grant')
    .action(a('access.grant'));
  acc
    .command('revoke')
    .argument('<grantId>', 'grant id (grt_…)')
    .description('Revoke a grant')
    .action(a('access.revoke'));
  acc
    .command('check')
    .argument('<url>', 'a URL of the site, or a path')
    .option('--email <email>', 'the visitor’s e-mail address')
    .option('--ip <ip>', 'the visitor’s address')
    .option('--country <cc>', 'the visitor’s country')
    .option('--credential <kind:id>', 'a credential the visitor holds (`link:lnk_…`)')
    .option('--capability <cap>', 'page.view (default), comments.read, comments.write, …')
    .option('--team-member', 'the visitor is a signed-in member')
    .description('Would this visitor see this URL, and through which grant?')
    .action(a('access.check'));
  acc.command('links').description('List share links').action(a('access.links'));
  scoped(acc.command('link'))
    .option('--name <name>', 'what the link is for')
    .option('--role <role>', 'viewer or commenter (default)')
    .option('--landing <path>', 'the page it opens (default /)')
    .description('Make a share link and print its URL')
    .action(a('access.link'));
  acc
    .command('unlink')
    .argument('<linkId>', 'share link id (lnk_…)')
    .description('Revoke a share link')
    .action(a('access.unlink'));
  acc
    .command('credentials')
    .addArgument(new Argument('<kind>', 'credential kind').choices(['machine', 'password']))
    .description('List machine or password credentials')
    .action(a('access.credentials'));
  scoped(acc.command('machine'))
    .option('--name <name>', 'what it is for')
    .option('--role <role>', 'viewer (default), commenter, editor or manager')
    .description('Make a machine credential; prints its token once')
    .action(a('access.machine'));
  scoped(acc.command('password'))
    .option('--name <name>', 'what it is for')
    .option('--password <password>', 'the password (default: read from stdin)')
    .option('--role <role>', 'viewer (default) or commenter')
    .description('Protect paths with a password')
    .action(a('access.password'));
  acc
    .command('rotate')
    .addArgument(new Argument('<kind>', 'credential kind').choices(['machine', 'password']))
    .argument('<id>', 'credential id')
    .option('--password <password>', 'the new password (default: read from stdin)')
    .description('New token or password; sessions of the old one end')
    .action(a('access.rotate'));
  acc
    .command('rm')
    .addArgument(new Argument('<kind>', 'credential kind').choices(['machine', 'password']))
    .argument('<id>', 'credential id')
    .description('Revoke a machine or password credential')
    .action(a('access.rm'));
  acc
    .command('logout-all')
    .description('End every visitor session of the space')
    .action(a('access.logout-all'));
  // People and access requests
  const people = program
    .command('people')
    .description('People a space is shared with by e-mail (no account needed)');
  people.command('ls').description('List the space’s people and what they may see').action(a('people.ls'));
  people
    .command('invite')
    .argument('<email>', 'their address')
    .option('--role <role>', 'viewer (default), commenter, editor or manager')
    .option('--paths <globs>', 'comma-separated path globs (default /**; !/x/** excludes)')
    .option('--name <name>', 'their name')
    .option('--note <text>', 'a line added to the invitation e-mail')
    .description('Share the space (--space or the link) with someone; they are e-mailed a sign-in link')
    .action(a('people.invite'));
  people
    .command('grant')
    .argument('<id>', 'person id (per_…)')
    .option('--role <role>', 'viewer (default), commenter, editor or manager')
    .option('--paths <globs>', 'comma-separated path globs (default /**)')
    .option('--none', 'keep the person but take all access away')
    .description('Replace what a person may see')
    .action(a('people.grant'));
  people
    .command('resend')
    .argument('<id>', 'person id (per_…)')
    .description('E-mail a new sign-in link (the previous one stops working)')
    .action(a('people.resend'));
  people
    .command('rm')
    .argument('<id>', 'person id (per_…)')
    .description('Remove a person and revoke their access (asks first; --yes to skip)')
    .action(a('people.rm'));
  const requests = program.command('requests').description('Visitors’ requests for access to a space');
  requests
    .command('ls')
    .option('--all', 'also approved and denied ones')
    .description('List requests waiting for an answer')
    .action(a('requests.ls'));
  requests
    .command('approve')
    .argument('<id>', 'request id (areq_…)')
    .option('--role <role>', 'viewer (default), commenter, editor or manager')
    .option('--paths <globs>', 'comma-separated path globs (default /**)')
    .description('Let the requester in: they become a person and are e-mailed a sign-in link')
    .action(a('requests.approve'));
  requests
    .command('deny')
    .argument('<id>', 'request id (areq_…)')
    .description('Refuse a request')
    .action(a('requests.deny'));

  // Variables
  const vars = program.command('vars').description('Variables of a space');
  vars.command('ls').description('List variables (secret values are never shown)').action(a('vars.ls'));
  vars
    .command('set')
    .argument('<name>', 'variable name')
    .argument('[value]', 'value; read from stdin when omitted')
    .option('--secret', 'write-only: the value is never shown again')
    .description('Set a variable')
    .action(a('vars.set'));
  vars
    .command('rm')
    .argument('<name>', 'variable name')
    .description('Delete a variable')
    .action(a('vars.rm'));

  program
    .command('operations')
    .option('--limit <n>', 'how many', '20')
    .description('Recent operations of a space (renames, restores, deletions)')
    .action(a('operations'));
  program
    .command('activity')
    .option('--team <team>', 'a team’s activity (default: every team of the account; --space: that space’s)')
    .option(
      '--code <code...>',
      'only these events: catalogue codes or resource.* (repeatable, or comma lists)',
    )
    .option('--limit <n>', 'how many', '20')
    .option('--follow', 'keep streaming new events (needs --space or --team)')
    .description('What happened: publishes, promotes, settings, keys, members (newest first)')
    .action(a('activity'));
  addRuntimeCommands(program, a);
  program
    .command('analytics')
    .argument('[space]', 'space id, slug or live URL (default: --space or the linked space)')
    .addOption(new Option('--window <window>', 'how far back').choices(['48h', '7d', '30d']).default('7d'))
    .description('Requests, visitors, bandwidth, status classes and top paths/referrers/countries of a space')
    .action(a('analytics'));

  program
    .command('api')
    .argument('<method>', 'HTTP method')
    .argument('<path>', 'path under the API URL, e.g. /v1/spaces')
    .option('--input <source>', 'request body: @file, or - for stdin')
    .option('--paginate', 'follow pagination; print items as JSON Lines')
    .option('--idempotency-key <key>', 'Idempotency-Key header')
    .description('Call any API endpoint with your credential (the escape hatch)')
    .action(a('api'));
  program
    .command('docs')
    .argument(
      '[topic...]',
      'a topic (page slug) such as `cli` or `errors/not_found`; without one: the topics',
    )
    .option('--search <words>', 'search every page and list the matching topics')
    .option('--all', 'list every page, not only the essential ones')
    .description('Read the server’s documentation: list topics, print one, or search')
    .action(a('docs'));
  program
    .command('completion')
    .argument('<shell>', 'bash, zsh or fish')
    .description('Print a shell completion script')
    .action(a('completion'));

  return program;
}

export function globalsOf(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

/** The command tree alone (for docs and completions): actions that do nothing. */
export function definitions(): Command {
  const noop: Action = async () => {};
  return buildProgram(() => async () => {}, new Proxy({}, { get: () => noop }) as Record<string, Action>);
}
