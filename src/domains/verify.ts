/**
 * Domain verification (spec "Domain verification"): one validate queries DNS now and rewrites
 * the four states and their timestamps with what it finds; NXDOMAIN/NODATA is a verdict
 * (`failed`), a resolver that does not answer is a 503 that changes nothing.
 */
import type { Db } from '../store/db';
import * as store from '../store/domains';
import { ServiceError } from '../errors';
import { createDnsClient, DnsUnavailableError, normalizeName, type DnsClient, type DnsOptions } from '../lib/dns';
import { dkimHost, dkimTarget, spfInclude } from './dns-records';
import { requireDomain } from './domains';

type Verdict = boolean;
export interface Checks { mx: Verdict; spf: Verdict; dkim: Verdict; dmarc: Verdict; ownership: Verdict | null }

/** Rule 3: at least one MX, and every MX of the domain is the platform's host. */
export async function checkMx(dns: DnsClient, domain: string, hostname: string): Promise<Verdict> {
  const mx = await dns.mx(domain);
  return mx !== null && mx.every((m) => m.exchange === hostname);
}

/** The domain's single SPF record (two or more is a permerror, RFC 7208 4.5) includes ours. */
export async function checkSpf(dns: DnsClient, domain: string, hostname: string): Promise<Verdict> {
  const spf = ((await dns.txt(domain)) ?? []).filter((r) => /^v=spf1(\s|$)/i.test(r.trim()));
  if (spf.length !== 1) return false;
  const include = `include:${spfInclude(hostname)}`;
  return spf[0].trim().split(/\s+/).slice(1).some((term) => {
    const t = term.toLowerCase().replace(/^\+/, '');
    return t === include || t === `${include}.`;
  });
}

/** Tag list of a DKIM or DMARC record: `k=v; k=v`, names lowercased, values trimmed. */
export function tags(record: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    out.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * One selector: its CNAME points at our target. The spec's DKIM records are the customer's two
 * CNAMEs ("both must be published") and nothing else; the key at the target is the operator's
 * own record (`domain dkim`), so a key not yet republished there after a rotation is not the
 * customer's domain failing, and it does not stop the domain from sending.
 */
async function checkSelector(dns: DnsClient, domain: string, token: string, hostname: string, key: store.DkimKeyRow | undefined): Promise<Verdict> {
  if (!key) return false;
  return (await dns.cname(dkimHost(key.selector, domain))) === dkimTarget(key.selector, token, hostname);
}

export async function checkDkim(dns: DnsClient, d: store.DomainRow, hostname: string, keys: store.DkimKeyRow[]): Promise<Verdict> {
  const results = await Promise.all((['s1', 's2'] as const).map((s) => checkSelector(dns, d.domain, d.ownership_token, hostname, keys.find((k) => k.selector === s))));
  return results.every(Boolean);
}

// The domain part is any host name: the record this service itself asks for names ESTAFETA_HOSTNAME,
// which on a test machine may be a single label ("vm").
const mailtoUri = /^mailto:[^@\s]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.?(!\d+[kmgt]?)?$/i;

/** A single v=DMARC1 record (RFC 7489 6.6.3) with a valid policy and at least one mailto rua. */
export async function checkDmarc(dns: DnsClient, domain: string): Promise<Verdict> {
  const records = ((await dns.txt(`_dmarc.${domain}`)) ?? []).filter((r) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(r.trim()));
  if (records.length !== 1) return false;
  const t = tags(records[0]);
  if (!['none', 'quarantine', 'reject'].includes((t.get('p') ?? '').toLowerCase())) return false;
  const rua = (t.get('rua') ?? '').split(',').map((u) => u.trim()).filter(Boolean);
  return rua.length > 0 && rua.every((u) => mailtoUri.test(u));
}

export async function checkOwnership(dns: DnsClient, d: store.DomainRow, hostname: string): Promise<Verdict> {
  return (await dns.cname(`${d.ownership_token}.${d.domain}`)) === normalizeName(`verify.${hostname}`);
}

/** All lookups at once; any unanswered lookup aborts the whole verification. */
export async function runChecks(dns: DnsClient, d: store.DomainRow, hostname: string, keys: store.DkimKeyRow[]): Promise<Checks> {
  try {
    const [mx, spf, dkim, dmarc, ownership] = await Promise.all([
      checkMx(dns, d.domain, hostname),
      checkSpf(dns, d.domain, hostname),
      checkDkim(dns, d, hostname, keys),
      checkDmarc(dns, d.domain),
      // Rule 4: once proven, ownership is never queried again.
      d.ownership_verified_at === null ? checkOwnership(dns, d, hostname) : Promise.resolve(null),
    ]);
    return { mx, spf, dkim, dmarc, ownership };
  } catch (err) {
    dns.cancel();
    if (err instanceof DnsUnavailableError) {
      throw new ServiceError('service_unavailable', `DNS did not answer; domain states unchanged. ${err.message}`);
    }
    throw err;
  }
}

/**
 * The new row states: revoked records stay revoked (an administrative state, not a DNS one), but
 * their dates move like the others': each is "the date of the last validation of that record,
 * successful or not" (spec, Domain), and this validation did query it.
 */
export function nextStates(d: store.DomainRow, c: Checks, at: number): store.DomainStates {
  const s: store.DomainStates = { ...d, last_verification_at: at };
  for (const k of ['mx', 'spf', 'dkim', 'dmarc'] as const) {
    if (d[`${k}_status`] !== 'revoked') s[`${k}_status`] = c[k] ? 'verified' : 'failed';
    s[`${k}_verified_at`] = at;
  }
  if (c.ownership === true) s.ownership_verified_at = at;
  return s;
}

export interface ValidateOptions { hostname: string; dnsServers: readonly string[]; dns?: DnsOptions; now?: () => number }

/** POST /v1/domains/{id}/validate and `estafeta domain validate`. */
export async function validateDomain(db: Db, instanceId: number, id: number, o: ValidateOptions): Promise<store.DomainRow> {
  const d = requireDomain(db, instanceId, id);
  const now = o.now ?? Date.now;
  if (d.is_sandbox) {
    // Rule 5: the sandbox always validates as verified, without any query.
    const at = now();
    store.updateDomainStates(db, instanceId, d.id, nextStates(d, { mx: true, spf: true, dkim: true, dmarc: true, ownership: null }, at), at);
    return requireDomain(db, instanceId, d.id);
  }
  const hostname = normalizeName(o.hostname);
  const keys = store.dkimKeys(db, d.id);
  const checks = await runChecks(createDnsClient(o.dnsServers, o.dns), d, hostname, keys);
  const at = now();
  // Re-read: the row may have changed (revoked, rotated, deleted) while DNS answered.
  const current = requireDomain(db, instanceId, d.id);
  store.updateDomainStates(db, instanceId, d.id, nextStates(current, checks, at), at);
  return requireDomain(db, instanceId, d.id);
}
