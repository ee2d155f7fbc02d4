/**
 * The edge reuses a visitor's backend token for 5 seconds (src/serve/visitor-token-header.ts):
 * the same visitor of the same space and host gets the same token, any other visitor, grant, role,
 * host or space a token of its own, and after 5 seconds a new one is signed.
 */
import { expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { BACKEND_TOKEN_REUSE_MS, backendAuthorization } from '../../src/serve/visitor-token-header.ts';

it('reuses a token for the same visitor for 5 seconds, never across visitors', () => {
  const clock = new ManualClock(new Date('2026-11-29T00:00:00Z'));
  let minted = 0;
  const services = {
    clock,
    visitorTokens: {
      mint: (input: Record<string, unknown>) => ({ token: `t${++minted}:${JSON.stringify(input)}` }),
    },
  } as never;
  const ctx = (over: Record<string, unknown> = {}) =>
    ({ space: { id: 'spc_a' }, hostname: 'a.localhost', grant: null, gate: null, ...over }) as never;
  const first = backendAuthorization(services, ctx());
  expect(backendAuthorization(services, ctx())).toBe(first);
  expect(minted).toBe(1);
  expect(backendAuthorization(services, ctx({ space: { id: 'spc_b' } }))).not.toBe(first);
  expect(backendAuthorization(services, ctx({ hostname: 'b.localhost' }))).not.toBe(first);
  const signedIn = ctx({ gate: { visitor: { userId: 'usr_1', email: 'a@x', emailVerified: true } } });
  const person = backendAuthorization(services, signedIn);
  expect(person).not.toBe(first);
  expect(person).toContain('usr_1');
  const viewer = ctx({ grant: { id: 'grt_1', role: 'viewer', audience: { type: 'link' } } });
  const editor = ctx({ grant: { id: 'grt_1', role: 'commenter', audience: { type: 'link' } } });
  expect(backendAuthorization(services, viewer)).not.toBe(backendAuthorization(services, editor));
  clock.advance(BACKEND_TOKEN_REUSE_MS - 1);
  expect(backendAuthorization(services, ctx())).toBe(first);
  clock.advance(1);
  expect(backendAuthorization(services, ctx())).not.toBe(first);
});
