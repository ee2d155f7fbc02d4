/**
 * The orders of `GET /v1/spaces` (`sort`): what each spelling means, and the key a page's cursor
 * carries so the next page resumes after the last row in that order.
 */
import { ApiError } from '../../errors/problem.ts';
import {
  NEWEST_FIRST,
  type SpaceAfter,
  type SpaceOrder,
  type SpaceRow,
  type SpaceSortKey,
  spaceSortValue,
} from '../../store/repos/spaces/spaces.ts';

export type { SpaceOrder };

/** `name`, `-name`, `updated`, `-updated`, `created`, `-created` (a leading `-` reverses); none: newest first. */
export function parseSpaceSort(sort: string | undefined): SpaceOrder {
  if (!sort) return NEWEST_FIRST;
  const desc = sort.startsWith('-');
  const key = (desc ? sort.slice(1) : sort) as SpaceSortKey;
  return { key, desc };
}

/** The resume key of a row: its id for `created`, else `[value, id]` as JSON. */
export function spaceCursorKey(row: SpaceRow, order: SpaceOrder): string {
  return order.key === 'created' ? row.id : JSON.stringify([spaceSortValue(row, order.key), row.id]);
}

/** The inverse of `spaceCursorKey` (the cursor is signed, so a bad key is a bug, answered as a bad cursor). */
export function spaceAfter(key: string | null, order: SpaceOrder): SpaceAfter | null {
  if (key === null || order.key === 'created') return key;
  try {
    const parsed: unknown = JSON.parse(key);
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === 'string' &&
      typeof parsed[1] === 'string'
    )
      return { value: parsed[0], id: parsed[1] };
  } catch {}
  throw new ApiError(
    'invalid_cursor',
    'The cursor is not one this listing issued. Start again without a cursor.',
    {
      pointer: '/cursor',
      details: { in: 'query' },
    },
  );
}
