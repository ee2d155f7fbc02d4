/**
 * Wildcard patterns of traffic rules (`*` matches any run of characters, including none).
 *
 * Patterns never become regular expressions: a pattern is split at its stars into literal pieces and
 * matched by anchoring the first piece at the start, the last at the end, and finding every middle
 * piece greedily left to right (leftmost match is always safe for `*`-only globs). There is no
 * backtracking, so the cost is bounded by (input length × number of pieces) whatever the input.
 */

/** Longest pattern we accept, and most stars (runs of consecutive stars count once). */
export const WILDCARD_MAX_LENGTH = 1024;
export const WILDCARD_MAX_STARS = 16;

export interface WildcardMatcher {
  readonly pattern: string;
  test(input: string): boolean;
}

export class WildcardError extends Error {}

export function compileWildcard(
  pattern: string,
  options: { caseInsensitive?: boolean } = {},
): WildcardMatcher {
  if (pattern.length > WILDCARD_MAX_LENGTH) {
    throw new WildcardError(`a wildcard pattern may have at most ${WILDCARD_MAX_LENGTH} characters`);
  }
  const fold = options.caseInsensitive ? (s: string) => s.toLowerCase() : (s: string) => s;
  // `a**b` means the same as `a*b`.
  const pieces = fold(pattern)
    .replace(/\*{2,}/g, '*')
    .split('*');
  const stars = pieces.length - 1;
  if (stars > WILDCARD_MAX_STARS) {
    throw new WildcardError(`a wildcard pattern may have at most ${WILDCARD_MAX_STARS} '*'`);
  }
  if (stars === 0) {
    const literal = pieces[0]!;
    return { pattern, test: (input) => fold(input) === literal };
  }
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  const middle = pieces.slice(1, -1).filter((p) => p.length > 0);
  const minLength = first.length + last.length + middle.reduce((n, p) => n + p.length, 0);
  return {
    pattern,
    test(raw) {
      const input = fold(raw);
      if (input.length < minLength) return false;
      if (!input.startsWith(first) || !input.endsWith(last)) return false;
      let at = first.length;
      const end = input.length - last.length;
      for (const piece of middle) {
        const found = input.indexOf(piece, at);
        if (found < 0 || found + piece.length > end) return false;
        at = found + piece.length;
      }
      return at <= end;
    },
  };
}
