import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

/**
 * An HTTP server on a Unix socket in a private temporary directory, started on first use: how the
 * server offers workerd processes its services (bindings, outbound proxy, storage, the log sink),
 * each reached through an `external` service with a per-process token the service checks.
 */
export class PrivateSocketServer {
  private server: http.Server | null = null;
  private starting: Promise<string> | null = null;
  private dir: string | null = null;

  /** `name` names the directory and the socket (`spaces-<name>-…/<name>.sock`). */
  constructor(
    private readonly name: string,
    private readonly handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
    private readonly options: http.ServerOptions = {},
  ) {}

  /** The socket's path (the server starts listening on the first call). */
  socket(): Promise<string> {
    this.starting ??= this.listen();
    return this.starting;
  }

  private listen(): Promise<string> {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `spaces-${this.name}-`));
    const socket = path.join(this.dir, `${this.name}.sock`);
    const server = http.createServer(this.options, this.handler);
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => resolve(socket));
    });
  }

  /** Stops listening, drops open connections and removes the directory. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.starting = null;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }
}
