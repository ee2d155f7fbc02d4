import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { buildServer } from '../../src/server.ts';

it('answers /readyz 503 until start-up has finished (owner created, jobs running), then 200', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-ready-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SPACES_DATA_DIR: dataDir,
    SPACES_LOG_LEVEL: 'silent',
  });
  const server = await buildServer(config, { logger: pino({ level: 'silent' }) });
  try {
    const before = await server.app.inject({ method: 'GET', url: '/readyz' });
    expect(before.statusCode).toBe(503);
    expect(before.json().code).toBe('service_unavailable');
    expect((await server.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    await server.listen();
    const after = await server.app.inject({ method: 'GET', url: '/readyz' });
    expect(after.statusCode).toBe(200);
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
