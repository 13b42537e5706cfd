/**
 * A real UDP DNS responder on 127.0.0.1 (port 0) whose zone each test sets, so the service's
 * resolver (ESTAFETA_DNS_SERVERS) gets real answers: NXDOMAIN for absent names, NODATA for absent
 * types, CNAMEs followed within the zone like a recursive resolver, and failure modes on demand.
 */
import dgram from 'node:dgram';
import * as packet from 'dns-packet';

export interface ZoneRecords { A?: string[]; AAAA?: string[]; MX?: { exchange: string; priority: number }[]; TXT?: string[]; CNAME?: string }
/** Keys: lowercase FQDN without trailing dot. */
export type Zone = Record<string, ZoneRecords>;
/** answer: serve the zone; silent: never reply (resolver times out); servfail/refused: that rcode. */
export type DnsMode = 'answer' | 'silent' | 'servfail' | 'refused';

export interface DnsServer {
  address: string;
  port: number;
  setZone(z: Zone): void;
  setMode(m: DnsMode): void;
  queries: { name: string; type: string }[];
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;
const FLAGS = packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE;

const norm = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/** A TXT string longer than 255 bytes goes out as several character-strings (as DKIM keys do). */
function txtChunks(value: string): Buffer[] {
  const buf = Buffer.from(value, 'utf8');
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += 255) out.push(buf.subarray(i, i + 255));
  return out.length ? out : [Buffer.alloc(0)];
}

function recordsOf(name: string, type: string, r: ZoneRecords): packet.Answer[] {
  const base = { name, ttl: 60, class: 'IN' as const };
  switch (type) {
    case 'A': return (r.A ?? []).map((data) => ({ ...base, type: 'A' as const, data }));
    case 'AAAA': return (r.AAAA ?? []).map((data) => ({ ...base, type: 'AAAA' as const, data }));
    case 'MX': return (r.MX ?? []).map((m) => ({ ...base, type: 'MX' as const, data: { preference: m.priority, exchange: m.exchange === '.' ? '' : m.exchange } }));
    case 'TXT': return (r.TXT ?? []).map((v) => ({ ...base, type: 'TXT' as const, data: txtChunks(v) }));
    default: return [];
  }
}

/** Answers for (name, type) in the zone, following CNAMEs inside it; null means NXDOMAIN. */
export function resolveInZone(zone: Zone, qname: string, qtype: string): packet.Answer[] | null {
  const answers: packet.Answer[] = [];
  let name = norm(qname);
  for (let hops = 0; hops < 8; hops++) {
    const r = zone[name];
    if (!r) return answers.length ? answers : null; // a dangling CNAME target: answer what we have
    if (r.CNAME !== undefined && qtype !== 'CNAME') {
      answers.push({ name, ttl: 60, class: 'IN', type: 'CNAME', data: norm(r.CNAME) });
      name = norm(r.CNAME);
      continue;
    }
    if (r.CNAME !== undefined) {
      answers.push({ name, ttl: 60, class: 'IN', type: 'CNAME', data: norm(r.CNAME) });
      return answers;
    }
    return [...answers, ...recordsOf(name, qtype, r)];
  }
  return answers;
}

export async function startDns(t: { teardown(fn: () => unknown): void }, zone: Zone, mode: DnsMode = 'answer'): Promise<DnsServer> {
  let currentZone: Zone = zone;
  let currentMode: DnsMode = mode;
  const queries: { name: string; type: string }[] = [];
  const sock = dgram.createSocket('udp4');

  sock.on('message', (msg, rinfo) => {
    let q: packet.Packet;
    try {
      q = packet.decode(msg);
    } catch {
      return; // not DNS: ignore like a real server would
    }
    const question = q.questions?.[0];
    if (!question) return;
    queries.push({ name: norm(question.name), type: question.type });
    if (currentMode === 'silent') return;
    let rcode: number = RCODE.NOERROR;
    let answers: packet.Answer[] = [];
    if (currentMode === 'servfail') rcode = RCODE.SERVFAIL;
    else if (currentMode === 'refused') rcode = RCODE.REFUSED;
    else {
      const found = resolveInZone(currentZone, question.name, question.type);
      if (found === null) rcode = RCODE.NXDOMAIN;
      else answers = found;
    }
    const reply = packet.encode({ type: 'response', id: q.id, flags: FLAGS | rcode, questions: [question], answers });
    sock.send(reply, rinfo.port, rinfo.address);
  });

  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(0, '127.0.0.1', () => resolve());
  });
  const port = sock.address().port;
  let closed = false;
  const close = (): Promise<void> => {
    if (closed) return Promise.resolve();
    closed = true;
    return new Promise((resolve) => sock.close(() => resolve()));
  };
  t.teardown(close);
  return {
    address: `127.0.0.1:${port}`,
    port,
    setZone: (z) => { currentZone = z; },
    setMode: (m) => { currentMode = m; },
    queries,
    close,
  };
}
