import { accessCodes } from './codes/access.ts';
import { anonymousCodes } from './codes/anonymous.ts';
import { buildCodes } from './codes/builds.ts';
import { cronCodes } from './codes/crons.ts';
import { databaseCodes } from './codes/database.ts';
import { domainCodes } from './codes/domains.ts';
import { eventCodes } from './codes/events.ts';
import { generalCodes } from './codes/general.ts';
import { oauthCodes } from './codes/oauth.ts';
import { peopleCodes } from './codes/people.ts';
import { publishingCodes } from './codes/publishing.ts';
import { runtimeCodes } from './codes/runtime.ts';
import { spaceCodes } from './codes/spaces.ts';
import { storageCodes } from './codes/storage.ts';
import { tagCodes } from './codes/tags.ts';
import { teamCodes } from './codes/teams.ts';
import { webhookCodes } from './codes/webhooks.ts';

export interface CodeInfo {
  status: number;
  /** One sentence on what the code means; the docs page for the code starts with it. */
  summary: string;
  /** Default recovery steps safe to show to people (problem `suggestions`). */
  suggestions?: string[];
  /** Default copy-pasteable commands (problem `next`). */
  next?: string[];
}
export type CodeTable = Record<string, CodeInfo>;

/**
 * The one catalog of error codes. Each area keeps its codes in `codes/<area>.ts`; this merges them.
 * Codes are never renamed or removed once shipped.
 */
const tables = {
  ...generalCodes,
  ...teamCodes,
  ...spaceCodes,
  ...anonymousCodes,
  ...publishingCodes,
  ...oauthCodes,
  ...domainCodes,
  ...tagCodes,
  ...buildCodes,
  ...webhookCodes,
  ...eventCodes,
  ...peopleCodes,
  ...accessCodes,
  ...runtimeCodes,
  ...cronCodes,
  ...storageCodes,
  ...databaseCodes,
};
export const catalog: Record<keyof typeof tables, CodeInfo> = tables;

export type ErrorCode = keyof typeof catalog;

/** `validation_error` → `Validation error`: titles are derived mechanically from codes. */
export function titleOf(code: string): string {
  const words = code.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function statusOf(code: ErrorCode): number {
  return catalog[code].status;
}
