import { createHmac } from 'node:crypto';
import { decodeCanonicalBase64url, macMatches } from '../base64url.ts';
import { ApiError } from '../errors/problem.ts';

export interface PageRequest {
  limit?: number;
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  pagination: { nextCursor: string | null; hasMore: boolean };
}

/**
 * Opaque, tamper-evident cursors: `base64url(json).base64url(hmac)`. The payload names the listing it
 * belongs to, so a cursor from one listing (or one filter) can't be replayed against another. Both
 * parts must be spelled exactly as issued (canonical base64url): an altered cursor is refused even
 * when it decodes to the same bytes.
 */
export class Cursors {
  constructor(private readonly secret: Buffer) {}

  encode(listing: string, after: string): string {
    const payload = Buffer.from(JSON.stringify({ l: listing, a: after })).toString('base64url');
    return `${payload}.${this.sign(payload).toString('base64url')}`;
  }

  /** The key to continue after; throws `invalid_cursor` (pointer `/cursor`) for anything not ours. */
  decode(listing: string, cursor: string): string {
    const bad = () =>
      new ApiError(
        'invalid_cursor',
        'The cursor is not one this listing issued. Start again without a cursor.',
        {
          pointer: '/cursor',
          details: { in: 'query' },
        },
      );
    const dot = cursor.indexOf('.');
    if (dot <= 0) throw bad();
    const payload = cursor.slice(0, dot);
    if (!macMatches(cursor.slice(dot + 1), this.sign(payload))) throw bad();
    const json = decodeCanonicalBase64url(payload);
    if (!json) throw bad();
    let parsed: { l?: unknown; a?: unknown };
    try {
      parsed = JSON.parse(json.toString('utf8'));
    } catch {
      throw bad();
    }
    if (parsed.l !== listing || typeof parsed.a !== 'string') throw bad();
    return parsed.a;
  }

  private sign(payload: string): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest();
  }
}

/**
 * Keyset pagination over a time-sortable id, newest first. `fetch(after, n)` returns up to n rows with
 * id < after (or the newest when after is null), ordered by id descending. A listing in another order
 * passes `keyOf` (the key its `fetch` resumes after, e.g. the sort value and the id).
 */
export async function keysetPage<R extends { id: string }, T>(
  cursors: Cursors,
  listing: string,
  req: PageRequest,
  fetch: (after: string | null, n: number) => Promise<R[]>,
  present: (row: R) => T | Promise<T>,
  /** What the next page resumes after (the last row's id unless the listing orders by more). */
  keyOf: (row: R) => string = (row) => row.id,
): Promise<Page<T>> {
  const limit = req.limit ?? 20;
  const after = req.cursor ? cursors.decode(listing, req.cursor) : null;
  const rows = await fetch(after, limit + 1);
  const hasMore = rows.length > limit;
  const pageRows = rows.slice(0, limit);
  const data = await Promise.all(pageRows.map(present));
  const last = pageRows[pageRows.length - 1];
  return {
    data,
    pagination: { nextCursor: hasMore && last ? cursors.encode(listing, keyOf(last)) : null, hasMore },
  };
}
