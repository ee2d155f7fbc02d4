import type { CodeTable } from '../catalog.ts';

/** Crons: paths of the live version requested on a schedule (issue 26, behaviour §4.8). */
export const cronCodes = {
  cron_not_found: {
    status: 404,
    summary: 'The live version declares no cron with this key.',
    suggestions: [
      'List the live version’s crons with `GET /v1/spaces/{spaceId}/crons`; a key is the path lowercased with other characters as `-` (`/api/digest` → `api-digest`).',
    ],
  },
} satisfies CodeTable;
