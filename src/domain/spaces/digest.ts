import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, arrays in order, strings
 * escaped as JSON.stringify does. Equal values give equal text on every database and platform.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** `settingsDigest` = sha256 hex of `canonicalJson({config, title})` (config null when no overlay). */
export function settingsDigest(title: string, config: unknown): string {
  return createHash('sha256')
    .update(canonicalJson({ config: config ?? null, title }))
    .digest('hex');
}
