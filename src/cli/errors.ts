/** A mistake on the command line (exit code 2). Problems the API answers are the SDK's `SpacesProblem`. */
export class UsageError extends Error {}
