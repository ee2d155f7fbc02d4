/** A mistake on the command line (exit code 2). Problems the API answers are the SDK's `SpacesProblem`. */
export class UsageError extends Error {}

/** What the CLI suggests when the API can't be reached at all. */
export function networkSuggestions(origin: string): string[] {
  return [
    `Is the server running at ${origin}? For another address give --api-url <url> or set SPACES_API_URL.`,
  ];
}
