import type { CodeTable } from '../catalog.ts';

/** Builds from an uploaded source or a git repository, and the git remote. */
export const buildCodes = {
  build_not_waiting_for_source: {
    status: 409,
    summary:
      'The build is not waiting for a source archive: it has one already, or was not made from an upload.',
  },
  build_not_terminal: {
    status: 409,
    summary: 'Only a finished build (succeeded, failed, canceled or skipped) can be retried.',
    suggestions: ['Cancel the build first, or wait for it to finish.'],
  },
  build_source_missing: {
    status: 409,
    summary:
      'The build’s source is gone (its work files were removed), so it can’t be retried; start a new build.',
  },
  git_source_refused: {
    status: 400,
    summary:
      'The repository URL is not one builds may clone: only `https://` to public addresses, unless the server’s `SPACES_GIT_ALLOW` allows more.',
  },
  invalid_git_ref: {
    status: 400,
    summary:
      'The ref is not a branch, tag or commit name git accepts (no leading `-`, spaces, `..` or control characters).',
  },
  git_remote_not_available: {
    status: 404,
    summary: 'The space has no service-managed git remote (anonymous spaces have none).',
  },
  repository_not_connected: {
    status: 404,
    summary: 'The space has no repository connection.',
    suggestions: ['POST /v1/spaces/{spaceId}/repository-connection with a clone URL first.'],
  },
  repository_connection_exists: {
    status: 409,
    summary: 'The space is connected to a repository already (one connection per space).',
    suggestions: ['PATCH the connection, or DELETE it and connect again.'],
  },
  git_clone_failed: {
    status: 422,
    summary:
      'The repository could not be cloned: the URL, the branch or the credential is wrong, or the host did not answer.',
  },
} satisfies CodeTable;
