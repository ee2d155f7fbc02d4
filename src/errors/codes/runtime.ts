import type { CodeTable } from '../catalog.ts';

/** Code that runs: functions in workerd (issue 26). */
export const runtimeCodes = {
  runtime_not_provisioned: {
    status: 404,
    summary:
      'The space runs no code: its live version declares no `runtime` with `kind: "functions"` (or it has no live version).',
    suggestions: [
      'Add `"runtime": {"kind": "functions"}` to spaces.json with a `handler.ts` or modules under `functions/`, then publish.',
    ],
  },
} satisfies CodeTable;
