import { Resolver } from 'node:dns/promises';

/** What a lookup found: the answers, none (the name or type does not exist), or no answer at all. */
export type Lookup = { kind: 'found'; values: string[] } | { kind: 'none' } | { kind: 'error'; code: string };

/** The lookups domain checks make; a port so tests and deployments choose the servers asked. */
export interface DnsLookups {
  txt(name: string): Promise<Lookup>;
  cname(name: string): Promise<Lookup>;
  addresses(name: string): Promise<Lookup>;
}

const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME']);

/**
 * node:dns over the configured servers (`SPACES_DNS_SERVERS`), or the system's. Each question is
 * bounded (2 s, two tries); "does not exist" and "could not ask" are told apart, so a resolver outage
 * never reads as a lost domain.
 */
export class NodeDnsLookups implements DnsLookups {
  private readonly resolver = new Resolver({ timeout: 2000, tries: 2 });

  constructor(servers: readonly string[]) {
    if (servers.length) this.resolver.setServers([...servers]);
  }

  private async ask(fn: () => Promise<string[]>): Promise<Lookup> {
    try {
      const values = await fn();
      return values.length ? { kind: 'found', values } : { kind: 'none' };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
      return ABSENT.has(code) ? { kind: 'none' } : { kind: 'error', code };
    }
  }

  txt(name: string): Promise<Lookup> {
    return this.ask(async () => (await this.resolver.resolveTxt(name)).map((chunks) => chunks.join('')));
  }

  cname(name: string): Promise<Lookup> {
    return this.ask(() => this.resolver.resolveCname(name));
  }

  async addresses(name: string): Promise<Lookup> {
    const [v4, v6] = await Promise.all([
      this.ask(() => this.resolver.resolve4(name)),
      this.ask(() => this.resolver.resolve6(name)),
    ]);
    const values = [...(v4.kind === 'found' ? v4.values : []), ...(v6.kind === 'found' ? v6.values : [])];
    if (values.length) return { kind: 'found', values };
    if (v4.kind === 'error') return v4;
    if (v6.kind === 'error') return v6;
    return { kind: 'none' };
  }
}
