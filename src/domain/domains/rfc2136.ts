import crypto from 'node:crypto';
import net from 'node:net';
import type { Config } from '../../config.ts';
import { type DnsProvider, zoneOf } from './dns-provider.ts';

/**
 * RFC 2136 dynamic update, signed with TSIG (RFC 8945), over TCP: the DNS provider that adds and
 * removes the `_acme-challenge` TXT values of DNS-01 orders on an operator's primary server (BIND's
 * `allow-update { key …; }`, Knot, PowerDNS, and the many managed DNS services that speak it).
 *
 * The messages are built here, with no library: npm has no maintained DNS UPDATE + TSIG package, and
 * the two messages needed (add one TXT value, delete one TXT value) are a few dozen bytes of a
 * well-specified format. Responses are read as far as needed: the header's RCODE and the response's
 * own TSIG, whose MAC is checked against the request's (so a forged "NOERROR" is refused).
 */
export interface Rfc2136Options {
  host: string;
  port: number;
  /** The TSIG key's name, as the server knows it. */
  keyName: string;
  /** `hmac-sha256` (default), `hmac-sha512`, `hmac-sha384`, `hmac-sha224`, `hmac-sha1` or `hmac-md5`. */
  algorithm: TsigAlgorithm;
  /** The shared secret, decoded from base64. */
  secret: Buffer;
  /** Zones the key may update (lower case, no trailing dot). */
  zones: string[];
  /** Bound on one exchange, in ms. */
  timeoutMs?: number;
}

export const TSIG_ALGORITHMS = {
  'hmac-md5': { name: 'hmac-md5.sig-alg.reg.int', hash: 'md5' },
  'hmac-sha1': { name: 'hmac-sha1', hash: 'sha1' },
  'hmac-sha224': { name: 'hmac-sha224', hash: 'sha224' },
  'hmac-sha256': { name: 'hmac-sha256', hash: 'sha256' },
  'hmac-sha384': { name: 'hmac-sha384', hash: 'sha384' },
  'hmac-sha512': { name: 'hmac-sha512', hash: 'sha512' },
} as const;
export type TsigAlgorithm = keyof typeof TSIG_ALGORITHMS;

const TYPE = { SOA: 6, TXT: 16, TSIG: 250 } as const;
const CLASS = { IN: 1, NONE: 254, ANY: 255 } as const;
const OPCODE_UPDATE = 5;
/** Seconds of clock difference the server may allow (the usual 300). */
const FUDGE = 300;

const RCODES: Record<number, string> = {
  1: 'FORMERR (the server could not read the update)',
  2: 'SERVFAIL (the server failed to apply the update)',
  3: 'NXDOMAIN (a prerequisite name does not exist)',
  4: 'NOTIMP (the server does not support dynamic update)',
  5: 'REFUSED (the server refuses updates to this zone from this key or address: check allow-update)',
  6: 'YXDOMAIN',
  7: 'YXRRSET',
  8: 'NXRRSET',
  9: 'NOTAUTH (the server is not authoritative for the zone, or refused the TSIG key)',
  10: 'NOTZONE (the name is outside the zone)',
};
const TSIG_ERRORS: Record<number, string> = {
  16: 'BADSIG (the TSIG secret does not match the server’s)',
  17: 'BADKEY (the server does not know this TSIG key name or algorithm)',
  18: 'BADTIME (this server’s clock and the DNS server’s differ by more than 5 minutes)',
  22: 'BADTRUNC',
};

/** A name in uncompressed wire form (lower case: TSIG's canonical form too). */
function encodeName(name: string): Buffer {
  const parts: Buffer[] = [];
  for (const label of name.toLowerCase().replace(/\.$/, '').split('.')) {
    if (!label) continue;
    const b = Buffer.from(label, 'ascii');
    if (b.length > 63) throw new Error(`DNS label too long in ${name}`);
    parts.push(Buffer.from([b.length]), b);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function u48(n: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeUIntBE(n, 0, 6);
  return b;
}

function rr(name: string, type: number, cls: number, ttl: number, rdata: Buffer): Buffer {
  return Buffer.concat([encodeName(name), u16(type), u16(cls), u32(ttl), u16(rdata.length), rdata]);
}

/** TXT RDATA: the value in character-strings of at most 255 bytes. */
function txtRdata(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length || i === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
  }
  return Buffer.concat(parts);
}

/** The TSIG variables that follow the message in the MAC's input (RFC 8945 §4.3.3). */
function tsigVariables(keyName: string, algorithm: string, time: number, error: number, other: Buffer) {
  return Buffer.concat([
    encodeName(keyName),
    u16(CLASS.ANY),
    u32(0),
    encodeName(algorithm),
    u48(time),
    u16(FUDGE),
    u16(error),
    u16(other.length),
    other,
  ]);
}

/** An UPDATE message for `zone` with `updates` (already-encoded RRs), unsigned. */
export function updateMessage(id: number, zone: string, updates: Buffer[]): Buffer {
  const header = Buffer.concat([
    u16(id),
    u16(OPCODE_UPDATE << 11),
    u16(1), // ZOCOUNT
    u16(0), // PRCOUNT
    u16(updates.length), // UPCOUNT
    u16(0), // ADCOUNT
  ]);
  return Buffer.concat([header, encodeName(zone), u16(TYPE.SOA), u16(CLASS.IN), ...updates]);
}

/** Signs a message: appends the TSIG record and bumps ARCOUNT; answers the signed bytes and the MAC. */
export function signMessage(
  message: Buffer,
  key: { name: string; algorithm: TsigAlgorithm; secret: Buffer },
  time: number,
): { signed: Buffer; mac: Buffer } {
  const alg = TSIG_ALGORITHMS[key.algorithm];
  const mac = crypto
    .createHmac(alg.hash, key.secret)
    .update(message)
    .update(tsigVariables(key.name, alg.name, time, 0, Buffer.alloc(0)))
    .digest();
  const id = message.readUInt16BE(0);
  const rdata = Buffer.concat([
    encodeName(alg.name),
    u48(time),
    u16(FUDGE),
    u16(mac.length),
    mac,
    u16(id),
    u16(0),
    u16(0),
  ]);
  const signed = Buffer.concat([message, rr(key.name, TYPE.TSIG, CLASS.ANY, 0, rdata)]);
  signed.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return { signed, mac };
}

/** Reads a (possibly compressed) name at `offset`; answers it and the offset after it. */
function readName(buf: Buffer, offset: number): { name: string; next: number } {
  const labels: string[] = [];
  let pos = offset;
  let next = -1;
  for (let hops = 0; hops < 64; hops++) {
    const len = buf.readUInt8(pos);
    if (len === 0) {
      return { name: labels.join('.'), next: next === -1 ? pos + 1 : next };
    }
    if ((len & 0xc0) === 0xc0) {
      if (next === -1) next = pos + 2;
      pos = buf.readUInt16BE(pos) & 0x3fff;
      continue;
    }
    labels.push(buf.toString('ascii', pos + 1, pos + 1 + len));
    pos += 1 + len;
  }
  throw new Error('DNS name with a compression loop');
}

export interface UpdateResponse {
  rcode: number;
  /** The response's TSIG, if it has one. */
  tsig: { error: number; verified: boolean } | null;
}

/** Reads a response's RCODE and checks its TSIG against the request's MAC. */
export function readResponse(
  buf: Buffer,
  key: { name: string; algorithm: TsigAlgorithm; secret: Buffer },
  requestMac: Buffer,
): UpdateResponse {
  if (buf.length < 12) throw new Error('DNS response shorter than its header');
  const rcode = buf.readUInt16BE(2) & 0x0f;
  const counts = [0, 1, 2, 3].map((i) => buf.readUInt16BE(4 + 2 * i));
  let pos = 12;
  for (let i = 0; i < counts[0]!; i++) pos = readName(buf, pos).next + 4;
  const rrs = counts[1]! + counts[2]! + counts[3]!;
  let tsig: UpdateResponse['tsig'] = null;
  for (let i = 0; i < rrs; i++) {
    const start = pos;
    const owner = readName(buf, pos);
    pos = owner.next;
    const type = buf.readUInt16BE(pos);
    const rdlength = buf.readUInt16BE(pos + 8);
    const rdStart = pos + 10;
    pos = rdStart + rdlength;
    if (type !== TYPE.TSIG || i !== rrs - 1) continue;
    // The TSIG record: verify its MAC over request MAC + the response without it + its variables.
    const alg = readName(buf, rdStart);
    let p = alg.next;
    const time = buf.readUIntBE(p, 6);
    const macSize = buf.readUInt16BE(p + 8);
    const mac = buf.subarray(p + 10, p + 10 + macSize);
    p += 10 + macSize;
    const originalId = buf.readUInt16BE(p);
    const error = buf.readUInt16BE(p + 2);
    const otherLen = buf.readUInt16BE(p + 4);
    const other = buf.subarray(p + 6, p + 6 + otherLen);
    const unsigned = Buffer.from(buf.subarray(0, start));
    unsigned.writeUInt16BE(originalId, 0);
    unsigned.writeUInt16BE(counts[3]! - 1, 10);
    const hash = TSIG_ALGORITHMS[key.algorithm].hash;
    const expected = crypto
      .createHmac(hash, key.secret)
      .update(u16(requestMac.length))
      .update(requestMac)
      .update(unsigned)
      .update(tsigVariables(owner.name, alg.name, time, error, other))
      .digest();
    const verified =
      macSize > 0 &&
      mac.length === expected.length &&
      crypto.timingSafeEqual(mac, expected) &&
      owner.name.toLowerCase() === key.name.toLowerCase().replace(/\.$/, '');
    tsig = { error, verified };
  }
  return { rcode, tsig };
}

/** One DNS exchange over TCP (two-byte length prefix each way). */
function exchange(host: string, port: number, message: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let got = Buffer.alloc(0);
    const done = (err: Error | null, value?: Buffer) => {
      socket.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    socket.setTimeout(timeoutMs, () =>
      done(new Error(`DNS update to ${host}:${port}: no answer in ${timeoutMs} ms`)),
    );
    socket.on('error', (err) => done(new Error(`DNS update to ${host}:${port}: ${err.message}`)));
    socket.on('connect', () => socket.write(Buffer.concat([u16(message.length), message])));
    socket.on('data', (chunk) => {
      got = Buffer.concat([got, chunk]);
      if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
        done(null, got.subarray(2, 2 + got.readUInt16BE(0)));
      }
    });
    socket.on('end', () => done(new Error(`DNS update to ${host}:${port}: connection closed early`)));
  });
}

export class Rfc2136Provider implements DnsProvider {
  readonly zones: readonly string[];

  constructor(private readonly options: Rfc2136Options) {
    this.zones = options.zones;
  }

  private zoneFor(name: string): string {
    const zone = zoneOf(this.zones, name);
    if (!zone)
      throw new Error(`${name} is in none of the zones this server may update (${this.zones.join(', ')})`);
    return zone;
  }

  /** Sends one signed update of `zone` and throws unless the server applied it. */
  private async send(zone: string, update: Buffer): Promise<void> {
    const o = this.options;
    const key = { name: o.keyName, algorithm: o.algorithm, secret: o.secret };
    const id = crypto.randomInt(0, 0x10000);
    const { signed, mac } = signMessage(
      updateMessage(id, zone, [update]),
      key,
      Math.floor(Date.now() / 1000),
    );
    const answer = await exchange(o.host, o.port, signed, o.timeoutMs ?? 10_000);
    if (answer.readUInt16BE(0) !== id) throw new Error('DNS update: the answer is for another message');
    const r = readResponse(answer, key, mac);
    const where = `DNS update of ${zone} at ${o.host}:${o.port}`;
    if (r.tsig?.error)
      throw new Error(`${where}: ${TSIG_ERRORS[r.tsig.error] ?? `TSIG error ${r.tsig.error}`}`);
    if (r.rcode !== 0) throw new Error(`${where}: ${RCODES[r.rcode] ?? `RCODE ${r.rcode}`}`);
    if (!r.tsig?.verified) throw new Error(`${where}: the answer is not signed with the key; not trusted`);
  }

  async addTxt(name: string, value: string): Promise<void> {
    await this.send(this.zoneFor(name), rr(name, TYPE.TXT, CLASS.IN, 60, txtRdata(value)));
  }

  async removeTxt(name: string, value: string): Promise<void> {
    // Class NONE with the RDATA deletes exactly that record (RFC 2136 §2.5.4).
    await this.send(this.zoneFor(name), rr(name, TYPE.TXT, CLASS.NONE, 0, txtRdata(value)));
  }
}

/** The DNS provider `SPACES_RFC2136_*` configure, or null when none is. */
export function dnsProviderFromConfig(config: Config): DnsProvider | null {
  return config.rfc2136 ? new Rfc2136Provider(config.rfc2136) : null;
}
