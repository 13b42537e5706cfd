/**
 * Where a recipient domain's mail goes: every mail through ESTAFETA_RELAY, or the domain's MX hosts
 * (RFC 5321 §5.1) in preference order, resolved through ESTAFETA_DNS_SERVERS; the domain's own
 * A/AAAA when it has no MX; nowhere for a null MX (RFC 7505). A DNS outage defers, never bounces.
 */
import { promises as dnsPromises } from 'node:dns';
import { isIP } from 'node:net';
import type { Outcome } from './outcome';

export interface Hop { host: string; address: string; port: number; secure: boolean; auth?: { user: string; pass: string } }
export type Route = { kind: 'hops'; hops: Hop[] } | { kind: 'outcome'; outcome: Outcome };

export interface RouteOptions { dnsServers: readonly string[]; deliveryPort: number; relay: string | null }
export interface Router { route(domain: string): Promise<Route> }

const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA']);
const errCode = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
// Every verdict DNS gives is permanent, so each restricts the address (CONTRACT §5).
const bounced = (response: string): Route => ({ kind: 'outcome', outcome: { kind: 'bounced', scope: 'recipient', response, restrict: true } });
const deferred = (response: string): Route => ({ kind: 'outcome', outcome: { kind: 'deferred', scope: 'site', response } });

export function relayHop(relay: string): Hop {
  const u = new URL(relay);
  const secure = u.protocol === 'smtps:';
  const auth = u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined;
  return { host: u.hostname.replace(/^\[|\]$/g, ''), address: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || (secure ? 465 : 25)), secure, auth };
}

export function createRouter(o: RouteOptions): Router {
  const resolver = new dnsPromises.Resolver({ timeout: 3000, tries: 2 });
  if (o.dnsServers.length) resolver.setServers([...o.dnsServers]);
  // Successful answers are kept briefly: a burst to one domain must not cost a lookup per mail,
  // and a change in DNS (a new MX, a null MX) must show within seconds, whatever the TTL said:
  // like Postfix, which keeps no DNS cache of its own.
  const cacheMs = 2_000;
  const cache = new Map<string, { until: number; route: Route }>();

  async function addresses(host: string): Promise<{ list: string[]; failed: boolean }> {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const list = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    const failed = [v4, v6].some((r) => r.status === 'rejected' && !NO_RECORD.has(errCode(r.reason)));
    return { list, failed };
  }

  /**
   * The relay by name is looked up like any host, through ESTAFETA_DNS_SERVERS (CONTRACT §2:
   * every lookup), its name kept for TLS. A name that DNS does not serve (`localhost`, a name
   * of /etc/hosts) is then asked of the system's resolver, as Postfix's relayhost lookup falls
   * back to the native one: the operator named that host. A relay that cannot be found defers,
   * since the recipients are not at fault.
   */
  async function relayRoute(relay: Hop): Promise<Route> {
    if (isIP(relay.host)) return { kind: 'hops', hops: [relay] };
    const a = await addresses(relay.host);
    if (!a.list.length) a.list = await systemAddresses(relay.host);
    if (a.list.length) return { kind: 'hops', hops: a.list.map((address) => ({ ...relay, address })) };
    return deferred(`451 4.4.3 relay host ${relay.host} not found in DNS${a.failed ? ' (lookup failed)' : ''}`);
  }

  async function systemAddresses(host: string): Promise<string[]> {
    try {
      return (await dnsPromises.lookup(host, { all: true })).map((r) => r.address);
    } catch {
      return [];
    }
  }

  async function lookup(domain: string): Promise<Route> {
    let mx: { exchange: string; priority: number }[];
    try {
      mx = await resolver.resolveMx(domain);
    } catch (err) {
      const code = errCode(err);
      if (code === 'ENOTFOUND') return bounced(`550 5.1.2 domain ${domain} does not exist (DNS NXDOMAIN)`);
      if (code !== 'ENODATA') return deferred(`451 4.4.3 DNS lookup of ${domain} MX failed: ${code}`);
      mx = [];
    }
    if (mx.length === 1 && (mx[0].exchange === '' || mx[0].exchange === '.')) {
      return bounced(`556 5.1.10 domain ${domain} accepts no mail (null MX)`);
    }
    // No MX: the domain itself is the implicit MX (RFC 5321 §5.1).
    const exchanges = mx.length ? [...mx].sort((a, b) => a.priority - b.priority).map((m) => m.exchange.replace(/\.$/, '')) : [domain];
    const hops: Hop[] = [];
    let failed = false;
    for (const host of exchanges) {
      const a = await addresses(host);
      failed ||= a.failed;
      // One server named twice (two MX names, one address) is tried once, at its best preference:
      // a temporary failure moves on to the next host, never to the same server again.
      for (const address of a.list) if (!hops.some((h) => h.address === address)) hops.push({ host, address, port: o.deliveryPort, secure: false });
    }
    if (hops.length) return { kind: 'hops', hops };
    if (failed) return deferred(`451 4.4.3 DNS lookup of the mail hosts of ${domain} failed`);
    // Said as it is: MX hosts that have no address are not a domain without an MX.
    if (mx.length) return bounced(`550 5.4.4 the mail hosts of ${domain} (${exchanges.join(', ')}) have no address (A or AAAA)`);
    return bounced(`550 5.1.2 domain ${domain} has no mail host (no MX, A or AAAA)`);
  }

  const relay = o.relay === null ? null : relayHop(o.relay);
  return {
    async route(recipientDomain) {
      // Every mail goes through the relay: one cached route for all domains.
      const domain = relay ? '' : recipientDomain;
      const hit = cache.get(domain);
      if (hit && hit.until > Date.now()) return hit.route;
      const route = relay ? await relayRoute(relay) : await lookup(domain);
      if (route.kind === 'hops') {
        if (cache.size > 10_000) cache.clear();
        cache.set(domain, { until: Date.now() + cacheMs, route });
      }
      return route;
    },
  };
}
