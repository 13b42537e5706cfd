/**
 * Sending domains: register (or reactivate), read, delete and revoke. Validation against DNS
 * lives in verify.ts. The sandbox domain is provisioned with its instance and never changes.
 */
import type { Db } from '../store/db';
import { containsText } from '../store/db';
import { listPage, mapPage, Where, type Page, type PageRequest } from '../store/page';
import * as store from '../store/domains';
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

export function listDomains(db: Db, instanceId: number, q: { domain?: string; is_verified?: boolean }, p: PageRequest): Page<store.DomainRow> {
  const w = new Where().add('d.instance_id = ?', instanceId).add('d.deleted_at IS NULL');
  if (q.domain !== undefined) w.add(...containsText('d.domain', q.domain));
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

export function parseDomainName(input: string, pointer = '/domain'): string {
  const domain = normalizeDomain(input);
  if (!domain) {
    throw new ServiceError('validation_error', 'Invalid domain name.', {
      errors: [{ pointer, code: 'value_error', message: 'is not a valid domain name' }],
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
export function addDomain(db: Db, instanceId: number, input: string, at: number, limit: number | null): store.DomainRow {
  const domain = parseDomainName(input);
  const existing = store.findDomainByName(db, instanceId, domain, true);
  if (existing && existing.deleted_at === null) {
    throw new ServiceError('domain_already_exists', `Domain ${domain} is already registered.`);
  }
  if (limit !== null) {
    const usage = (db.prepare('SELECT COUNT(*) AS n FROM domains WHERE instance_id = ? AND deleted_at IS NULL AND is_sandbox = 0').get(instanceId) as { n: number }).n;
    if (usage >= limit) {
      throw new ServiceError('plan_custom_domains_limit_exceeded', 'The plan quota of active custom domains is reached.', { limit, usage, remaining: Math.max(0, limit - usage) });
    }
  }
  const keys = existing ? null : generateDomainKeys();
  const id = db.transaction(() => {
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
