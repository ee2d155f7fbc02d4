/** Token lifetimes of the authorization server (documented in docs/guides/oauth.md). */
export const ACCESS_TOKEN_TTL_S = 3600; // 1 h
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600; // 30 d from each rotation
export const AUTH_CODE_TTL_S = 60; // 60 s, single use
export const DEVICE_CODE_TTL_S = 600; // 10 min
/** Minimum seconds between two device-code polls; each `slow_down` adds 5 s (RFC 8628 §3.5). */
export const DEVICE_POLL_INTERVAL_S = 5;

export const ACCESS_TOKEN_PREFIX = 'sfo_';
export const REFRESH_TOKEN_PREFIX = 'sfr_';
export const CLIENT_SECRET_PREFIX = 'sfcs_';
export const DEVICE_CODE_PREFIX = 'sfd_';

/** The CLI: a built-in public client (device flow, or authorization code + PKCE on a loopback port). */
export const CLI_CLIENT_ID = 'spaces-cli';
