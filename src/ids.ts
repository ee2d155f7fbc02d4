import { randomBytes } from 'node:crypto';

// Crockford base32, lower-cased: the lexical order of ids equals their creation order.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function nextRandom(ms: number): number[] {
  if (ms === lastTime) {
    // Same millisecond: increment the previous random part so ids stay strictly increasing.
    const r = lastRandom.slice();
    for (let i = r.length - 1; i >= 0; i--) {
      if (r[i]! < 31) {
        r[i]!++;
        break;
      }
      r[i] = 0;
    }
    lastRandom = r;
    return r;
  }
  lastTime = ms;
  const bytes = randomBytes(16);
  lastRandom = Array.from({ length: 16 }, (_, i) => bytes[i]! & 31);
  return lastRandom;
}

/** A prefixed, time-sortable id: `team_01j…` (10 chars of time, 16 of randomness). */
export function newId(prefix: string, now: number = Date.now()): string {
  // Never go backwards: a clock step back would break the keyset order of ids.
  const ms = Math.max(now, lastTime);
  return `${prefix}_${encodeTime(ms)}${nextRandom(ms)
    .map((n) => ALPHABET[n])
    .join('')}`;
}

/** A random token with a recognisable prefix: `sfa_` + 43 base64url characters (256 bits). */
export function newToken(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}
