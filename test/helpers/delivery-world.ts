/**
 * A small world for delivery tests: a DNS responder, an SMTP sink as the MX of example.test, the
 * service pointed at both, a tenant with the sending domain brand.test whose DKIM keys are
 * published in the zone (as the operator would), and a resolver for mailauth that reads the zone.
 */
import { startDns, resolveInZone, type DnsServer, type Zone } from './dns-server';
import { startSink, type Sink, type SinkScript } from './smtp-sink';
import { startTestService, type TestService } from './service';

export interface World { dns: DnsServer; sink: Sink; ts: TestService; zone: Zone; instanceId: number; slug: string; txtResolver: (name: string, type: string) => Promise<string[][]> }

export async function startWorld(t: { teardown(fn: () => unknown): void }, o: { script?: SinkScript; env?: Record<string, string>; zone?: Zone } = {}): Promise<World> {
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
  const txtResolver = async (name: string, type: string): Promise<string[][]> => {
    const answers = resolveInZone(zone, name, type) ?? [];
    const txt = answers.filter((a) => a.type === 'TXT').map((a) => (a.data as Buffer[]).map((b) => b.toString()));
    if (!txt.length) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return txt;
  };
  return { dns, sink, ts, zone, instanceId: instance.id as number, slug, txtResolver };
}
