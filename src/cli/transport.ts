/**
 * What the CLI tells the SDK's transport about itself: its user agent and what to suggest when the
 * API can't be reached. `oauthFetch` is the transport without a credential or retries, for the OAuth
 * endpoints (form posts that answer in OAuth's JSON) and the login's reachability check.
 */
import { createSpacesFetch } from '../sdk/index.ts';

/** What every request of the CLI says it is (the SDK adds its own token after it). */
export const CLI_USER_AGENT = 'spaces-cli';

/** What the CLI suggests when the API can't be reached at all. */
export function networkSuggestions(origin: string): string[] {
  return [
    `Is the server running at ${origin}? For another address give --api-url <url> or set SPACES_API_URL.`,
  ];
}

/** The SDK's transport, once, unauthenticated: an unreachable server is a `network_error` problem. */
export function oauthFetch(): typeof fetch {
  return createSpacesFetch({ userAgent: CLI_USER_AGENT, networkSuggestions, retries: 0 });
}
