import { ApiError } from '../../errors/problem.ts';
import type { Principal } from './principal.ts';

/** Resolves a bearer token of one kind (recognised by its prefix) to a principal, or null if unknown. */
export type TokenResolver = (token: string) => Promise<Principal | null>;

/**
 * Bearer tokens → principals. Each credential kind registers its prefix; the kinds added by later
 * areas (OAuth tokens, space keys, machine credentials) plug in the same way.
 */
export class CredentialResolver {
  private readonly resolvers = new Map<string, TokenResolver>();

  register(prefix: string, resolver: TokenResolver): void {
    this.resolvers.set(prefix, resolver);
  }

  async resolve(token: string): Promise<Principal> {
    for (const [prefix, resolver] of this.resolvers) {
      if (token.startsWith(prefix)) {
        const principal = await resolver(token);
        if (principal) return principal;
        break;
      }
    }
    throw new ApiError('unauthorized', 'The bearer token is not valid: unknown, expired or revoked.', {
      facts: { challenge: { error: 'invalid_token' } },
    });
  }
}

/** Reads `Authorization: Bearer <token>`; null when absent. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) {
    throw new ApiError('unauthorized', 'The Authorization header must be "Bearer <token>".', {
      facts: { challenge: { error: 'invalid_request' } },
    });
  }
  return m[1]!;
}
