import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

/**
 * A cursor is accepted exactly as issued: any other spelling of the same bytes (base64url with
 * padding, other trailing bits, the `+/` alphabet, whitespace) is an altered cursor (README: 400
 * `invalid_cursor` pointing at `/cursor`).
 */
describeEachDb('cursor spelling', (db) => {
  let t: TestServer;
  let cursors: string[];
  let token: string;
  beforeAll(async () => {
    t = await startServer({ db });
    token = (await createUser(t)).token;
    for (let i = 0; i < 12; i++) {
      expect((await t.api('POST', '/v1/teams', { token, body: { name: `C${i}` } })).status).toBe(201);
    }
    // Every page's cursor: at least one of them has a `-` or `_` to respell.
    cursors = [];
    let next: string | null = null;
    do {
      const qs: string = next ? `&cursor=${encodeURIComponent(next)}` : '';
      const page = await t.api('GET', `/v1/teams?limit=1${qs}`, { token });
      expect(page.status).toBe(200);
      next = page.body.pagination.nextCursor;
      if (next) cursors.push(next);
    } while (next);
  });
  afterAll(() => t.close());

  const list = (cursor: string) =>
    t.api('GET', `/v1/teams?limit=1&cursor=${encodeURIComponent(cursor)}`, { token });

  it('refuses every other spelling of an issued cursor with 400 invalid_cursor at /cursor', async () => {
    const cursor = cursors[0]!;
    expect((await list(cursor)).status).toBe(200);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = cursor.at(-1)!;
    const withDash = cursors.find((c) => /[-_]/.test(c));
    expect(withDash).toBeDefined();
    const respelled: Record<string, string> = {
      // A 32-byte signature's last character holds 4 bits that must be zero: flip one.
      'flipped trailing bits': cursor.slice(0, -1) + alphabet[alphabet.indexOf(last) ^ 1],
      'added padding': `${cursor}=`,
      'padding on the payload': cursor.replace('.', '=.'),
      '+/ instead of -_': withDash!.replace(/-/g, '+').replace(/_/g, '/'),
      'a space': `${cursor.slice(0, 8)} ${cursor.slice(8)}`,
      'a trailing newline': `${cursor}\n`,
      'a tab in the signature': cursor.replace('.', '.\t'),
    };
    for (const [why, bad] of Object.entries(respelled)) {
      expect(Buffer.from(bad.split('.')[1] ?? '', 'base64url'), why).toEqual(
        Buffer.from((why.startsWith('+/') ? withDash! : cursor).split('.')[1]!, 'base64url'),
      );
      const res = await list(bad);
      const problem = expectProblem(res, 400, 'invalid_cursor');
      expect(problem.pointer, why).toBe('/cursor');
    }
  });
});
