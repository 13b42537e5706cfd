/**
 * Shared set-up of the domain tests: a real DNS responder, the real service pointed at it, an
 * instance with one registered domain, and the zone that publishes exactly what the service asks
 * for (the customer's records from dns_records, the operator's DKIM TXT from `domain dkim`).
 */
import { startDns, type DnsServer, type Zone } from '../helpers/dns-server';
import { startTestService, type TapLike, type TestService } from '../helpers/service';

export const HOSTNAME = 'mta.estafeta.test';

export interface DkimOut { domain: string; active_selector: string; selectors: { selector: 's1' | 's2'; active: boolean; cname_host: string; cname_target: string; txt: string }[] }
export interface DnsRecordOut { type: string; host: string; value: string; priority: number | null }

export interface DomainWorld {
  s: TestService;
  dns: DnsServer;
  slug: string;
  key: string;
  /** The service's API as this world's tenant (explicit key: other tenants never change it). */
  api: TestService['api'];
  /** Registers a domain (through the CLI) and reads its DKIM records; ownTenant: in a new instance. */
  domain: (name: string, opts?: { ownTenant?: boolean }) => Promise<DomainFixture>;
}

export interface DomainFixture extends DomainWorld {
  name: string;
  domain: any;
  dkim: DkimOut;
  /** The zone with every record of this domain published correctly. */
  zone: () => Zone;
  validate: () => Promise<{ status: number; body: any }>;
}

/** Everything the service asks for, published exactly as given. */
export function publishedZone(records: { ownership_cname: DnsRecordOut; mx: DnsRecordOut; spf: DnsRecordOut; dkim: DnsRecordOut[]; dmarc: DnsRecordOut }, dkim: DkimOut): Zone {
  const z: Zone = {};
  const at = (host: string) => (z[host] ??= {});
  at(records.ownership_cname.host).CNAME = records.ownership_cname.value;
  at(records.mx.host).MX = [{ exchange: records.mx.value, priority: records.mx.priority ?? 10 }];
  at(records.spf.host).TXT = [records.spf.value];
  for (const r of records.dkim) at(r.host).CNAME = r.value;
  for (const sel of dkim.selectors) at(sel.cname_target).TXT = [sel.txt];
  at(records.dmarc.host).TXT = [records.dmarc.value];
  return z;
}

/**
 * One DNS responder, one service and one tenant per test file (tests in a file run in sequence,
 * each on its own domain and setting the whole zone it needs), torn down with the file.
 */
export async function domainWorld(t: TapLike): Promise<DomainWorld> {
  const dns = await startDns(t, {});
  const s = await startTestService(t, { ESTAFETA_DNS_SERVERS: dns.address, ESTAFETA_HOSTNAME: HOSTNAME });
  const { slug, key } = await s.tenant();
  const api: TestService['api'] = (method, urlPath, opts = {}) => s.api(method, urlPath, { key, slug, ...opts });
  const world: DomainWorld = {
    s, dns, slug, key, api,
    domain: async (name, opts = {}) => {
      if (opts.ownTenant) {
        const other = await s.tenant();
        const otherApi: TestService['api'] = (method, urlPath, o = {}) => s.api(method, urlPath, { key: other.key, slug: other.slug, ...o });
        return bind({ ...world, slug: other.slug, key: other.key, api: otherApi }, name);
      }
      return bind(world, name);
    },
  };
  async function bind(w: DomainWorld, name: string): Promise<DomainFixture> {
    const { slug, api } = w;
    const added = await s.cli('domain', 'add', slug, name, '--json');
    if (added.code !== 0) throw new Error(`domain add failed: ${added.stdout}`);
    const dk = await s.cli<DkimOut>('domain', 'dkim', slug, name, '--json');
    if (dk.code !== 0) throw new Error(`domain dkim failed: ${dk.stdout}`);
    const domain = added.json;
    dns.setZone({});
    dns.setMode('answer');
    return {
      ...w, name: domain.domain, domain, dkim: dk.json,
      zone: () => publishedZone(domain.dns_records, dk.json),
      validate: () => api('POST', `/v1/domains/${domain.id}/validate`),
    };
  }
  return world;
}

/** A world shared by the tests of one file: created on first use, closed with the file. */
export function sharedWorld(file: TapLike): () => Promise<DomainWorld> {
  let w: Promise<DomainWorld> | undefined;
  return () => (w ??= domainWorld(file));
}

export const states = (d: any) => ({ mx: d.mx_status, spf: d.spf_status, dkim: d.dkim_status, dmarc: d.dmarc_status });
export const allVerified = { mx: 'verified', spf: 'verified', dkim: 'verified', dmarc: 'verified' };

/** A fresh service and tenant with one domain (default mail.example.com); s.api speaks as that tenant. */
export async function domainFixture(t: TapLike, name = 'mail.example.com'): Promise<DomainFixture> {
  return (await domainWorld(t)).domain(name);
}
