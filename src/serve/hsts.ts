/** A space's `hsts` setting: sent over HTTPS only (see edge.ts). */
export interface Hsts {
  maxAge: number;
  includeSubDomains?: boolean;
  preload?: boolean;
}

/** The `Strict-Transport-Security` value for a setting. */
export function hstsValue(h: Hsts): string {
  return `max-age=${h.maxAge}${h.includeSubDomains ? '; includeSubDomains' : ''}${h.preload ? '; preload' : ''}`;
}
