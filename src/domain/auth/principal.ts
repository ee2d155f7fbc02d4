import type { Scope } from './scopes.ts';

/** How a request proved who it is. */
export type CredentialKind =
  | 'session' // a signed-in person (`sfs_`)
  | 'api_key' // a team API key (`sfa_`)
  | 'oauth' // an OAuth access token issued to a person (authorization code / device flow)
  | 'client' // an OAuth client-credentials token (a machine, no person)
  | 'machine' // a space machine credential (`sfm_`)
  | 'space_key'; // the key of an unclaimed anonymous space (`sfc_`)

export interface Principal {
  kind: CredentialKind;
  credentialId: string;
  tenantId: string;
  /** The person behind the credential; null for machines and space keys. */
  userId: string | null;
  /** Teams the credential may act for; null means every team the person belongs to. */
  teamIds: readonly string[] | null;
  /** Sessions hold every scope; other credentials hold what they were granted. */
  scopes: ReadonlySet<Scope>;
  /** Space-bound credentials (space keys, machine credentials) act on this space only. */
  spaceId: string | null;
  /** OAuth client behind the credential, if any. */
  clientId?: string | null;
}

/** The interface's "general bearer": every credential kind except a space key. */
export function isGeneral(p: Principal): boolean {
  return p.kind !== 'space_key';
}
