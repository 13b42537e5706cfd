/** The three suppression lists: restrictions (hard bounces), unsubscribes, complaints. */
import type { Db } from './db';

export type SuppressionList = 'restrictions' | 'unsubscribes' | 'complaints';
export const suppressionLists: readonly SuppressionList[] = ['restrictions', 'unsubscribes', 'complaints'];

export interface SuppressionRow {
  id: number;
  instance_id: number;
  list: SuppressionList;
  recipient: string;
  reason: string | null;
  source: string;
  mail_id: string | null;
  created_at: number;
}

/** The first list the address is on (exact, canonical form), or undefined. */
export function findSuppression(db: Db, instanceId: number, recipient: string): SuppressionRow | undefined {
  return db.prepare('SELECT * FROM suppressions WHERE instance_id = ? AND recipient = ? ORDER BY id LIMIT 1').get(instanceId, recipient) as SuppressionRow | undefined;
}

/** Idempotent: adding an address already on the list keeps the first record. */
export function addSuppression(
  db: Db,
  instanceId: number,
  v: { list: SuppressionList; recipient: string; reason: string | null; source: string; mailId?: string | null; at: number },
): void {
  db.prepare(
    `INSERT INTO suppressions (instance_id, list, recipient, reason, source, mail_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (instance_id, list, recipient) DO NOTHING`,
  ).run(instanceId, v.list, v.recipient, v.reason, v.source, v.mailId ?? null, v.at);
}

export function removeSuppression(db: Db, instanceId: number, list: SuppressionList, recipient: string): boolean {
  return db.prepare('DELETE FROM suppressions WHERE instance_id = ? AND list = ? AND recipient = ?').run(instanceId, list, recipient).changes > 0;
}
