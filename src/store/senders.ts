/** Senders and the consent purposes each declares (with its opt_in / opt_out mode). */
import type { Db } from './db';
import { touchFresh } from './fresh';

export interface SenderRow {
  id: number;
  instance_id: number;
  domain_id: number;
  name: string;
  email_address: string;
  is_consent_required: number;
  created_at: number;
  updated_at: number;
  /** Joined: all four states of the domain verified, at read time. */
  domain_is_verified: number;
}

export interface SenderPurpose { purpose_id: number; code: string; mode: 'opt_in' | 'opt_out' }

export function insertSender(db: Db, instanceId: number, v: { domainId: number; name: string; email: string; at: number }): number {
  touchFresh(db);
  const r = db
    .prepare('INSERT INTO senders (instance_id, domain_id, name, email_address, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(instanceId, v.domainId, v.name, v.email, v.at, v.at);
  return Number(r.lastInsertRowid);
}

export function setSenderPurposes(db: Db, instanceId: number, senderId: number, purposes: { purposeId: number; mode: 'opt_in' | 'opt_out' }[], at: number): void {
  touchFresh(db);
  db.prepare('DELETE FROM sender_purposes WHERE sender_id = ?').run(senderId);
  const ins = db.prepare('INSERT INTO sender_purposes (sender_id, purpose_id, mode) VALUES (?, ?, ?)');
  for (const p of purposes) ins.run(senderId, p.purposeId, p.mode);
  db.prepare('UPDATE senders SET is_consent_required = ?, updated_at = ? WHERE instance_id = ? AND id = ?')
    .run(purposes.length > 0 ? 1 : 0, at, instanceId, senderId);
}

export function senderPurposes(db: Db, senderId: number): SenderPurpose[] {
  return db
    .prepare('SELECT sp.purpose_id, p.code, sp.mode FROM sender_purposes sp JOIN consent_purposes p ON p.id = sp.purpose_id WHERE sp.sender_id = ? ORDER BY p.code')
    .all(senderId) as SenderPurpose[];
}

/**
 * Senders within the plan quota of active senders: those of domains not deleted, every sender
 * an operator added (on the sandbox domain too), but not the one `instance create` provisions
 * (sandbox@<slug>.sandbox.test): it comes with the account, so a quota of N leaves N senders to add.
 */
export function quotaSenderCount(db: Db, instanceId: number): number {
  return (db.prepare(`SELECT COUNT(*) AS n FROM senders s JOIN domains d ON d.id = s.domain_id
    WHERE s.instance_id = ? AND d.deleted_at IS NULL AND NOT (d.is_sandbox = 1 AND s.email_address = 'sandbox@' || d.domain)`).get(instanceId) as { n: number }).n;
}
