import dns2 from 'dns2';

export type RecordType = 'TXT' | 'CNAME' | 'A' | 'AAAA';

/**
 * A real DNS server on 127.0.0.1 (UDP, port 0) answering from a table the test edits (`*.<parent>`
 * entries answer like DNS wildcards): unknown names are NXDOMAIN, a known name without the asked type answers no data. Point the server under test at
 * it with `SPACES_DNS_SERVERS=<address>`.
 */
export interface TestDns {
  address: string;
  set(name: string, type: RecordType, values: string[]): void;
  clear(name: string, type?: RecordType): void;
  close(): Promise<void>;
}

export async function startDns(): Promise<TestDns> {
  // dns2's typings lag its runtime (`listening`, resources as plain objects): used untyped here.
  const lib = dns2 as any;
  const { Packet } = lib;
  const table = new Map<string, Map<RecordType, string[]>>();
  const server = lib.createServer({
    udp: true,
    handle: (request: any, send: (r: unknown) => void) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      const name = String(q.name).toLowerCase().replace(/\.$/, '');
      // A `*.<parent>` entry answers any one label under the parent that has no entry of its own.
      const dot = name.indexOf('.');
      const byType = table.get(name) ?? (dot > 0 ? table.get(`*.${name.slice(dot + 1)}`) : undefined);
      if (!byType) {
        response.header.rcode = 3; // NXDOMAIN
        send(response);
        return;
      }
      const type = (Object.entries(Packet.TYPE) as Array<[string, number]>).find(
        ([, n]) => n === q.type,
      )?.[0] as RecordType | undefined;
      for (const value of (type && byType.get(type)) ?? []) {
        const base = { name: q.name, type: q.type, class: Packet.CLASS.IN, ttl: 1 };
        if (type === 'TXT') response.answers.push({ ...base, data: value });
        else if (type === 'CNAME') response.answers.push({ ...base, domain: value });
        else response.answers.push({ ...base, address: value });
      }
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
