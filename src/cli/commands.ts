import { accessActions } from './commands/access.ts';
import { accountActions } from './commands/account.ts';
import { activityActions } from './commands/activity.ts';
import { buildActions } from './commands/builds.ts';
import { dbActions } from './commands/db.ts';
import { docsActions } from './commands/docs.ts';
import { domainActions } from './commands/domains.ts';
import { logActions } from './commands/logs.ts';
import { mcpActions } from './commands/mcp.ts';
import { peopleActions } from './commands/people.ts';
import { projectActions } from './commands/project.ts';
import { spaceActions } from './commands/spaces.ts';
import { teamActions } from './commands/teams.ts';
import { toolActions } from './commands/tools.ts';
import { versionActions } from './commands/versions.ts';
import { webhookActions } from './commands/webhooks.ts';
import type { Action } from './program.ts';

/** Every command's implementation by its name in program.ts, one module per command group. */
export const actions: Record<string, Action> = {
  ...accountActions,
  ...projectActions,
  ...versionActions,
  ...spaceActions,
  ...teamActions,
  ...toolActions,
  ...docsActions,
  ...domainActions,
  ...buildActions,
  ...webhookActions,
  ...accessActions,
  ...activityActions,
  ...mcpActions,
  ...peopleActions,
  ...logActions,
  ...dbActions,
};
