import { CATALOGUE, CATALOGUE_CODES } from '../events/catalogue.ts';

/**
 * A webhook's `events` filter over the event catalogue (events/catalogue.ts): `*` (all), an exact
 * code (`version.ready`) or a whole resource (`version.*`).
 */
const RESOURCES: ReadonlySet<string> = new Set(Object.keys(CATALOGUE));
const EVENT_CODES: ReadonlySet<string> = new Set(CATALOGUE_CODES);

export const MAX_EVENT_FILTERS = 100;

/** The index of the first filter that names no code of the catalogue, or -1 when all are known. */
export function unknownFilterIndex(filters: readonly string[]): number {
  return filters.findIndex((f) => {
    if (f === '*') return false;
    if (f.endsWith('.*')) return !RESOURCES.has(f.slice(0, -2));
    return !EVENT_CODES.has(f);
  });
}

/** Whether an event code passes a webhook's filters (empty = all). */
export function filterMatches(filters: readonly string[], code: string): boolean {
  if (filters.length === 0) return true;
  for (const f of filters) {
    if (f === '*' || f === code) return true;
    if (f.endsWith('.*') && code.startsWith(f.slice(0, -1))) return true;
  }
  return false;
}
