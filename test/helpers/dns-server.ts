import { Resolver } from 'node:dns/promises';
import dns2 from 'dns2';

export type RecordType = 'TXT' | 'CNAME' | 'A' | 'AAAA';

/**
 * A real DNS server on 127.0.0.1 (UDP, port 0) answering from a table the test edits (`*.<parent>`
 * entries answer like DNS wildcards; a CNAME is followed like a recursive resolver would; names it
 * doesn't know are asked of `upstream` when given): unknown names are NXDOMAIN, a known name without the asked type answers no data. Point the server under test at
 * it with `SPACES_DNS_SERVERS=<address>`.
 */
export interface TestDns {
  address: string;
  set(name: string, type: RecordType, values: string[]): void;
  clear(name: string, type?: RecordType): void;
  close(): Promise<void>;
}

export async function startDns(opts: { upstream?: string } = {}): Promise<TestDns> {
  // dns2's typings lag its runtime (`listening`, resources as plain objects): used untyped here.
  const lib = dns2 as any;
  const { Packet } = lib;
  const table = new Map<string, Map<RecordType, string[]>>();
  const upstream = new Resolver({ timeout: 1000, tries: 1 });
  if (opts.upstream) upstream.setServers([opts.upstream]);
  /** The table's values for a name and type (`*.<parent>` answering like a DNS wildcard). */
  const entry = (name: string) => {
    const dot = name.indexOf('.');
    return table.get(name) ?? (dot > 0 ? table.get(`*.${name.slice(dot + 1)}`) : undefined);
  };
  /** What the upstream server holds, for names the table doesn't know. */
  const ask = async (name: string, type: RecordType): Promise<string[]> => {
    if (!opts.upstream) return [];
    try {
      if (type === 'TXT') return (await upstream.resolveTxt(name)).map((c) => c.join(''));
      if (type === 'CNAME') return await upstream.resolveCname(name);
      return type === 'A' ? await upstream.resolve4(name) : await upstream.resolve6(name);
    } catch {
      return [];
    }
  };
  const server = lib.createServer({
    udp: true,
    handle: async (request: any, send: (r: unknown) => void) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      const name = String(q.name).toLowerCase().replace(/\.$/, '');
      const type = (Object.entries(Packet.TYPE) as Array<[string, number]>).find(
        ([, n]) => n === q.type,
      )?.[0] as RecordType | undefined;
      const push = (owner: string, t: RecordType, value: string) => {
        const base = { name: owner, type: Packet.TYPE[t], class: Packet.CLASS.IN, ttl: 1 };
        if (t === 'TXT') response.answers.push({ ...base, data: value });
        else if (t === 'CNAME') response.answers.push({ ...base, domain: value });
        else response.answers.push({ ...base, address: value });
      };
      // A name the table doesn't hold exactly is asked upstream first: a wildcard only answers names
      // that exist nowhere (as in DNS, where it never covers an existing name).
      const found = !table.has(name) && type ? await ask(name, type) : [];
      const byType = found.length ? undefined : entry(name);
      if (!byType) {
        for (const value of found) push(name, type!, value);
        if (!found.length) response.header.rcode = 3; // NXDOMAIN
        send(response);
        return;
      }
      const cname = byType.get('CNAME')?.[0];
      if (type && type !== 'CNAME' && cname && !byType.get(type)) {
        // Like a recursive resolver: the CNAME, then what its target holds (here or upstream).
        push(name, 'CNAME', cname);
        const target = cname.toLowerCase().replace(/\.$/, '');
        for (const value of entry(target)?.get(type) ?? (await ask(target, type))) push(target, type, value);
        send(response);
        return;
      }
      for (const value of (type && byType.get(type)) ?? []) push(name, type!, value);
      send(response);
    },
  });
  server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const addresses = (await server.listening) as { udp: { port: number } };
  return {
    address: `127.0.0.1:${addresses.udp.port}`,
    set(name, type, values) {
      const key = name.toLowerCase();
      const byType = table.get(key) ?? new Map();
      byType.set(type, values);
      table.set(key, byType);
    },
    clear(name, type) {
      const key = name.toLowerCase();
      if (!type) table.delete(key);
      else table.get(key)?.delete(type);
    },
    async close() {
      await server.close();
    },
  };
}
