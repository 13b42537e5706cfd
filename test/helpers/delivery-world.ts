/**
 * A small world for delivery tests: a DNS responder, an SMTP sink as the MX of example.test, the
 * service pointed at both, a tenant with the sending domain brand.test whose DKIM keys are
 * published in the zone (as the operator would), and a resolver for mailauth that reads the zone.
 */
import { startDns, resolveInZone, type DnsServer, type Zone } from './dns-server';
import { startSink, type Sink, type SinkScript } from './smtp-sink';
import { startTestService, type TestService } from './service';

export interface World { dns: DnsServer; sink: Sink; ts: TestService; zone: Zone; instanceId: number; slug: string; txtResolver: (name: string, type: string) => Promise<string[][]> }

export async function startWorld(t: { teardown(fn: () => unknown): void }, o: { script?: SinkScript; env?: Record<string, string>; zone?: Zone; verify?: boolean } = {}): Promise<World> {
  const sink = await startSink(t, o.script);
  const zone: Zone = {
    'example.test': { MX: [{ exchange: 'mx.example.test', priority: 10 }] },
    'mx.example.test': { A: ['127.0.0.1'] },
    ...(o.zone ?? {}),
  };
  const dns = await startDns(t, zone);
  const ts = await startTestService(t, {
    ESTAFETA_DNS_SERVERS: dns.address, ESTAFETA_DELIVERY_PORT: String(sink.port), ESTAFETA_RETRY_DELAYS: '1', ...(o.env ?? {}),
  });
  const { slug, instance } = await ts.tenant();
  const added = await ts.cli('domain', 'add', slug, 'brand.test', '--json');
  if (added.code !== 0) throw new Error(`domain add failed: ${added.stdout}`);
  const dkim = await ts.cli<{ selectors: { cname_host: string; cname_target: string; txt: string }[] }>('domain', 'dkim', slug, 'brand.test', '--json');
  for (const s of dkim.json.selectors) {
    zone[s.cname_host] = { CNAME: s.cname_target };
    zone[s.cname_target] = { TXT: [s.txt] };
  }
  dns.setZone(zone);
  if (o.verify) await verifyBrand(ts, slug, zone, dns);
  const txtResolver = async (name: string, type: string): Promise<string[][]> => {
    const answers = resolveInZone(zone, name, type) ?? [];
    const txt = answers.filter((a) => a.type === 'TXT').map((a) => (a.data as Buffer[]).map((b) => b.toString()));
    if (!txt.length) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return txt;
  };
  return { dns, sink, ts, zone, instanceId: instance.id as number, slug, txtResolver };
}

interface Rec { type: string; host: string; value: string; priority: number | null }

/** Publishes every record of brand.test's dns_records, validates it, and registers news@brand.test. */
async function verifyBrand(ts: TestService, slug: string, zone: Zone, dns: DnsServer): Promise<void> {
  const list = await ts.api<{ data: { id: number; domain: string; dns_records: Record<string, Rec | Rec[]> }[] }>('GET', '/v1/domains');
  const d = list.body.data.find((x) => x.domain === 'brand.test');
  if (!d) throw new Error('brand.test not listed');
  const add = (host: string, f: (z: Zone[string]) => void): void => {
    zone[host] = zone[host] ?? {};
    f(zone[host]);
  };
  for (const r of Object.values(d.dns_records).flat()) {
    if (r.type === 'CNAME') add(r.host, (z) => { z.CNAME = r.value; });
    if (r.type === 'MX') add(r.host, (z) => { z.MX = [{ exchange: r.value, priority: r.priority ?? 10 }]; });
    if (r.type === 'TXT') add(r.host, (z) => { z.TXT = [...(z.TXT ?? []), r.value]; });
  }
  dns.setZone(zone);
  const v = await ts.cli('domain', 'validate', slug, 'brand.test', '--json');
  if (v.code !== 0 || !v.json.is_verified) throw new Error(`domain validate did not verify: ${v.stdout}`);
  const s = await ts.cli('sender', 'add', slug, 'news@brand.test', '--name', 'Brand News', '--json');
  if (s.code !== 0) throw new Error(`sender add failed: ${s.stdout}`);
}
