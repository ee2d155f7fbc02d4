import { createHash } from 'node:crypto';
import type { SpaceConfig } from '../../schemas/space-config.ts';

// The settings digest: what `baseSettingsDigest` compare-and-swaps against (split from settings-overlay.ts).

/**
 * Canonical JSON: object keys sorted by UTF-16 code units (JavaScript's default sort), no whitespace,
 * strings and numbers as `JSON.stringify` writes them, `undefined` members left out — the JSON
 * Canonicalization Scheme (RFC 8785) for the values a config can hold. Equal values give equal text
 * whatever the key order they were stored or parsed in, on either database.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError('canonicalJson: value is not representable in JSON');
    return text;
  }
  if (Array.isArray(value)) {
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  }
  const obj = value as Record<string, unknown>;
  const members = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`);
  return `{${members.join(',')}}`;
}

/**
 * `settingsDigest` of a space: lowercase hex SHA-256 of the UTF-8 bytes of
 * `canonicalJson({config, title})`, where `config` is the stored (normalised) overlay or `null`.
 */
export function settingsDigest(title: string, config: SpaceConfig | null | undefined): string {
  return createHash('sha256')
    .update(canonicalJson({ title, config: config ?? null }), 'utf8')
    .digest('hex');
}
