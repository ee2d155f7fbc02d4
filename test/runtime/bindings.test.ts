/**
 * The bindings channel on its own (issue 26): a call is answered only with a token a process holds,
 * the handler learns the caller from the token (never from the call), a detached token stops
 * working, and handler errors come back as `{error:{code,message}}`.
 */
import http from 'node:http';
import { afterAll, expect, it } from 'vitest';
import { BINDINGS_TOKEN_HEADER, BindingError, BindingsChannel } from '../../src/runtime/bindings.ts';

const channel = new BindingsChannel();
afterAll(() => channel.close());

function call(socket: string, path: string, token: string | null, body: unknown) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = http.request(
      {
        socketPath: socket,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { [BINDINGS_TOKEN_HEADER]: token } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

it('names the caller by its token and refuses unknown or detached tokens', async () => {
  channel.register('echo', (caller, op, body) => {
    if (op === 'fail') throw new BindingError('echo_failed', 'asked to fail');
    return { caller, op, body };
  });
  const a = await channel.attach('token-a', { spaceId: 'sp_a', versionId: 'v_a' });
  expect(a.names).toEqual(['echo']);
  const ok = await call(a.socket, '/echo/hello', 'token-a', { x: 1, spaceId: 'sp_other' });
  expect(ok).toEqual({
    status: 200,
    body: {
      result: {
        caller: { spaceId: 'sp_a', versionId: 'v_a' },
        op: 'hello',
        body: { x: 1, spaceId: 'sp_other' },
      },
    },
  });
  expect((await call(a.socket, '/echo/hello', null, {})).status).toBe(403);
  expect((await call(a.socket, '/echo/hello', 'guessed', {})).body.error.code).toBe('binding_unknown_caller');
  expect((await call(a.socket, '/nope/x', 'token-a', {})).status).toBe(404);
  const failed = await call(a.socket, '/echo/fail', 'token-a', {});
  expect(failed).toEqual({ status: 400, body: { error: { code: 'echo_failed', message: 'asked to fail' } } });
  channel.detach('token-a');
  expect((await call(a.socket, '/echo/hello', 'token-a', {})).status).toBe(403);
});
