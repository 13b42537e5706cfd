/**
 * Sending domains: register (or reactivate), read, delete and revoke. Validation against DNS
 * lives in verify.ts. The sandbox domain is provisioned with its instance and never changes.
 */
import type { Db } from '../store/db';
import { domainToASCII } from 'node:url';
import { containsText } from '../store/db';
import { listPage, mapPage, Where, type Page, type PageRequest } from '../store/page';
import * as store from '../store/domains';
import { quotaSenderCount } from '../store/senders';
import { ServiceError } from '../errors';
import { iso } from '../lib/time';
import { isSandboxDomain, normalizeDomain } from '../lib/address';
import { randomToken } from '../lib/tokens';
import { generateDomainKeys, storeDomainKeys, type DomainKeys } from './dkim-keys';
import { dnsRecords } from './dns-records';

export function presentDomain(d: store.DomainRow, hostname: string) {
  const isVerified = d.mx_status === 'verified' && d.spf_status === 'verified' && d.dkim_status === 'verified' && d.dmarc_status === 'verified';
  return {
    id: d.id,
    domain: d.domain,
    mx_status: d.mx_status,
    spf_status: d.spf_status,
    dkim_status: d.dkim_status,
    dmarc_status: d.dmarc_status,
    mx_verified_at: iso(d.mx_verified_at),
    spf_verified_at: iso(d.spf_verified_at),
    dkim_verified_at: iso(d.dkim_verified_at),
    dmarc_verified_at: iso(d.dmarc_verified_at),
    ownership_token: d.ownership_token,
    ownership_verified_at: iso(d.ownership_verified_at),
    last_verification_at: iso(d.last_verification_at),
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
    is_verified: isVerified,
    is_ownership_verified: d.ownership_verified_at !== null,
    is_sandbox: d.is_sandbox === 1,
    dns_records: dnsRecords(d, hostname),
  };
}
export type DomainObject = ReturnType<typeof presentDomain>;

/**
 * Names are stored in ASCII form (xn--bcher-kva.example): a filter written as people write it
 * (bücher, Bücher.example) looks for each whole label in that form. A fragment of a label
 * ("ücher") has no ASCII form of its own and stays as written.
 */
function asciiLabels(needle: string): string {
  if (/^[\x00-\x7f]*$/.test(needle)) return needle;
  return needle.split('.').map((l) => (/^[\x00-\x7f]*$/.test(l) ? l : domainToASCII(l.toLowerCase()) || l)).join('.');
}

export function listDomains(db: Db, instanceId: number, q: { domain?: string; is_verified?: boolean }, p: PageRequest): Page<store.DomainRow> {
  const w = new Where().add('d.instance_id = ?', instanceId).add('d.deleted_at IS NULL');
  if (q.domain !== undefined) w.add(...containsText('d.domain', asciiLabels(q.domain)));
  if (q.is_verified !== undefined) w.add(`${store.domainVerifiedSql('d')} = ?`, q.is_verified ? 1 : 0);
  return listPage<store.DomainRow>(db, { select: 'd.*', from: `FROM domains d ${w}`, params: w.params, orderBy: 'd.id' }, p);
}

export function requireDomain(db: Db, instanceId: number, id: number): store.DomainRow {
  const d = store.getDomain(db, instanceId, id);
  if (!d) throw new ServiceError('domain_not_found', `Domain ${id} does not exist.`);
  return d;
}

export function requireDomainByName(db: Db, instanceId: number, name: string): store.DomainRow {
  const normalized = normalizeDomain(name) ?? name.toLowerCase();
  const d = store.findDomainByName(db, instanceId, normalized);
  if (!d) throw new ServiceError('domain_not_found', `Domain ${name} does not exist.`);
  return d;
}

/** 253 (RFC 1035, written form) less the longest prefix of its records: the 20-letter ownership token and a dot. */
const maxDomainLength = 253 - 21;

export function parseDomainName(input: string, pointer = '/domain'): string {
  const domain = normalizeDomain(input);
  if (!domain) {
    throw new ServiceError('validation_error', 'Invalid domain name.', {
      errors: [{ pointer, code: 'value_error', message: 'is not a valid domain name' }],
    });
  }
  // Its records are published at longer names (`<ownership token>.<domain>`, 21 more octets):
  // past 232 they would pass the 253 of a DNS name, and every validation fail without a verdict.
  if (domain.length > maxDomainLength) {
    throw new ServiceError('validation_error', `Domain name too long: at most ${maxDomainLength} characters, so its DNS records fit.`, {
      errors: [{ pointer, code: 'string_too_long', message: `String should have at most ${maxDomainLength} characters (its records' names add 21)`, params: { max_length: maxDomainLength } }],
    });
  }
  if (isSandboxDomain(domain)) {
    throw new ServiceError('validation_error', 'Domains under sandbox.test are reserved.', {
      errors: [{ pointer, code: 'value_error.reserved', message: 'names under the sandbox.test suffix are reserved for the sandbox' }],
    });
  }
  return domain;
}

/** Registers a client domain (all four states pending), or reactivates a deleted one. */
export function addDomain(db: Db, instanceId: number, input: string, at: number, limits: DomainLimits): store.DomainRow {
  const domain = parseDomainName(input);
  // Checked before the keys are generated (a refusal costs no RSA) and again under the write
  // lock, which the key generation must not hold (~200 ms): two concurrent adds (CLI runs, the
  // server) cannot both pass the quota or both insert the same name.
  const before = admissible(db, instanceId, domain, limits);
  const keys = before ? null : generateDomainKeys();
  const id = db.transaction(() => {
    const existing = admissible(db, instanceId, domain, limits);
    if (existing) {
      store.reactivateDomain(db, instanceId, existing.id, at);
      return existing.id;
    }
    const newId = store.insertDomain(db, instanceId, { domain, isSandbox: false, ownershipToken: randomToken(20), at });
    storeDomainKeys(db, newId, keys ?? generateDomainKeys(), at);
    return newId;
  })();
  return requireDomain(db, instanceId, id);
}

/** The instance's plan quotas a domain add obeys (null: no quota). */
export interface DomainLimits { maxDomains: number | null; maxSenders: number | null }

/** Throws unless `domain` may be added now; returns its deleted row when adding reactivates it. */
function admissible(db: Db, instanceId: number, domain: string, limits: DomainLimits): store.DomainRow | null {
  const existing = store.findDomainByName(db, instanceId, domain, true) ?? null;
  if (existing && existing.deleted_at === null) {
    throw new ServiceError('domain_already_exists', `Domain ${domain} is already registered.`);
  }
  const count = (sql: string, ...params: unknown[]): number => (db.prepare(sql).get(...params) as { n: number }).n;
  const { maxDomains, maxSenders } = limits;
  if (maxDomains !== null) {
    const usage = count('SELECT COUNT(*) AS n FROM domains WHERE instance_id = ? AND deleted_at IS NULL AND is_sandbox = 0', instanceId);
    if (usage >= maxDomains) {
      throw new ServiceError('plan_custom_domains_limit_exceeded', 'The plan quota of active custom domains is reached.', { limit: maxDomains, usage, remaining: Math.max(0, maxDomains - usage) });
    }
  }
  // A deleted domain's senders come back with it (spec, 402: reactivating a sender is
  // within the sender quota too).
  if (existing && maxSenders !== null) {
    const usage = quotaSenderCount(db, instanceId);
    const returning = count('SELECT COUNT(*) AS n FROM senders WHERE instance_id = ? AND domain_id = ?', instanceId, existing.id);
    if (usage + returning > maxSenders) {
      throw new ServiceError('plan_senders_limit_exceeded', `Re-adding ${domain} brings back its ${returning} sender(s), past the plan quota of active senders.`, {
        limit: maxSenders, usage, remaining: Math.max(0, maxSenders - usage),
      });
    }
  }
  return existing;
}

/** Inside the caller's transaction: `keys` generated before it began (see generateDomainKeys). */
export function provisionSandboxDomain(db: Db, instanceId: number, domain: string, keys: DomainKeys, at: number): number {
  const id = store.insertDomain(db, instanceId, { domain, isSandbox: true, ownershipToken: randomToken(20), at });
  storeDomainKeys(db, id, keys, at);
  return id;
}

/** A domain the operator may change: the sandbox domain cannot be modified (spec, Domain verification). */
export function requireClientDomain(db: Db, instanceId: number, name: string): store.DomainRow {
  const d = requireDomainByName(db, instanceId, name);
  if (d.is_sandbox) throw new ServiceError('domain_is_sandbox', 'The sandbox domain cannot be modified.');
  return d;
}

export function deleteDomain(db: Db, instanceId: number, name: string, at: number): void {
  const d = requireClientDomain(db, instanceId, name);
  store.softDeleteDomain(db, instanceId, d.id, at);
}

/** Administrative revocation: all four states `revoked`, timestamps untouched. */
export function revokeDomain(db: Db, instanceId: number, name: string, at: number): store.DomainRow {
  const d = requireClientDomain(db, instanceId, name);
  store.updateDomainStates(db, instanceId, d.id, { ...d, mx_status: 'revoked', spf_status: 'revoked', dkim_status: 'revoked', dmarc_status: 'revoked' }, at);
  return requireDomain(db, instanceId, d.id);
}

export const presentDomainPage = (page: Page<store.DomainRow>, hostname: string) => mapPage(page, (d) => presentDomain(d, hostname));
