/** Sending domains, their four verification states, and their two DKIM key pairs. */
import type { Db } from './db';
import { touchFresh } from './fresh';

export type RecordState = 'pending' | 'verified' | 'failed' | 'revoked';

export interface DomainRow {
  id: number;
  instance_id: number;
  domain: string;
  is_sandbox: number;
  ownership_token: string;
  ownership_verified_at: number | null;
  mx_status: RecordState;
  spf_status: RecordState;
  dkim_status: RecordState;
  dmarc_status: RecordState;
  mx_verified_at: number | null;
  spf_verified_at: number | null;
  dkim_verified_at: number | null;
  dmarc_verified_at: number | null;
  last_verification_at: number | null;
  deleted_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface DkimKeyRow {
  id: number;
  domain_id: number;
  selector: 's1' | 's2';
  private_key: string;
  public_key: string;
  is_active: number;
  created_at: number;
}

/** SQL that is true when all four states are verified: one definition for filters and reads. */
export const domainVerifiedSql = (alias: string): string =>
  `(${alias}.mx_status = 'verified' AND ${alias}.spf_status = 'verified' AND ${alias}.dkim_status = 'verified' AND ${alias}.dmarc_status = 'verified')`;

export function getDomain(db: Db, instanceId: number, id: number): DomainRow | undefined {
  return db.prepare('SELECT * FROM domains WHERE instance_id = ? AND id = ? AND deleted_at IS NULL').get(instanceId, id) as DomainRow | undefined;
}

/** Includes deleted rows: re-adding a deleted domain reactivates it. */
export function findDomainByName(db: Db, instanceId: number, domain: string, withDeleted = false): DomainRow | undefined {
  const sql = `SELECT * FROM domains WHERE instance_id = ? AND domain = ?${withDeleted ? '' : ' AND deleted_at IS NULL'}`;
  return db.prepare(sql).get(instanceId, domain) as DomainRow | undefined;
}

/** Whether any instance has this domain registered (not deleted): its MX may point at us. */
export function isRegisteredDomain(db: Db, domain: string): boolean {
  return db.prepare('SELECT 1 FROM domains WHERE domain = ? AND deleted_at IS NULL LIMIT 1').get(domain) !== undefined;
}

export function insertDomain(db: Db, instanceId: number, v: { domain: string; isSandbox: boolean; ownershipToken: string; at: number }): number {
  touchFresh(db);
  const state = v.isSandbox ? 'verified' : 'pending';
  const verifiedAt = v.isSandbox ? v.at : null;
  const r = db
    .prepare(
      `INSERT INTO domains (instance_id, domain, is_sandbox, ownership_token, ownership_verified_at,
         mx_status, spf_status, dkim_status, dmarc_status, mx_verified_at, spf_verified_at, dkim_verified_at, dmarc_verified_at,
         last_verification_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(instanceId, v.domain, v.isSandbox ? 1 : 0, v.ownershipToken, verifiedAt, state, state, state, state,
      verifiedAt, verifiedAt, verifiedAt, verifiedAt, verifiedAt, v.at, v.at);
  return Number(r.lastInsertRowid);
}

export function reactivateDomain(db: Db, instanceId: number, id: number, at: number): void {
  touchFresh(db);
  db.prepare(
    `UPDATE domains SET deleted_at = NULL, mx_status = 'pending', spf_status = 'pending', dkim_status = 'pending', dmarc_status = 'pending',
       updated_at = ? WHERE instance_id = ? AND id = ?`,
  ).run(at, instanceId, id);
}

export function softDeleteDomain(db: Db, instanceId: number, id: number, at: number): void {
  touchFresh(db);
  db.prepare('UPDATE domains SET deleted_at = ?, updated_at = ? WHERE instance_id = ? AND id = ?').run(at, at, instanceId, id);
}

export interface DomainStates {
  mx_status: RecordState; spf_status: RecordState; dkim_status: RecordState; dmarc_status: RecordState;
  mx_verified_at: number | null; spf_verified_at: number | null; dkim_verified_at: number | null; dmarc_verified_at: number | null;
  last_verification_at: number | null; ownership_verified_at: number | null;
}

export function updateDomainStates(db: Db, instanceId: number, id: number, s: DomainStates, at: number): void {
  touchFresh(db);
  db.prepare(
    `UPDATE domains SET mx_status = ?, spf_status = ?, dkim_status = ?, dmarc_status = ?,
       mx_verified_at = ?, spf_verified_at = ?, dkim_verified_at = ?, dmarc_verified_at = ?,
       last_verification_at = ?, ownership_verified_at = ?, updated_at = ? WHERE instance_id = ? AND id = ?`,
  ).run(s.mx_status, s.spf_status, s.dkim_status, s.dmarc_status, s.mx_verified_at, s.spf_verified_at, s.dkim_verified_at,
    s.dmarc_verified_at, s.last_verification_at, s.ownership_verified_at, at, instanceId, id);
}

export function dkimKeys(db: Db, domainId: number): DkimKeyRow[] {
  return db.prepare('SELECT * FROM dkim_keys WHERE domain_id = ? ORDER BY selector').all(domainId) as DkimKeyRow[];
}

export function upsertDkimKey(db: Db, domainId: number, v: { selector: 's1' | 's2'; privateKey: string; publicKey: string; active: boolean; at: number }): void {
  db.prepare(
    `INSERT INTO dkim_keys (domain_id, selector, private_key, public_key, is_active, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (domain_id, selector) DO UPDATE SET private_key = excluded.private_key, public_key = excluded.public_key,
       is_active = excluded.is_active, created_at = excluded.created_at`,
  ).run(domainId, v.selector, v.privateKey, v.publicKey, v.active ? 1 : 0, v.at);
}

export function setActiveSelector(db: Db, domainId: number, selector: 's1' | 's2'): void {
  db.prepare('UPDATE dkim_keys SET is_active = (selector = ?) WHERE domain_id = ?').run(selector, domainId);
}
