/** The three suppression lists: restrictions (hard bounces), unsubscribes, complaints. */
import type { Db } from './db';
import { containsText } from './db';
import { listPage, Where, type Page, type PageRequest } from './page';

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

/** The first list the address is on (case-insensitive, migration 020), or undefined. */
export function findSuppression(db: Db, instanceId: number, recipient: string): SuppressionRow | undefined {
  return db.prepare('SELECT * FROM suppressions WHERE instance_id = ? AND recipient = ? COLLATE NOCASE ORDER BY id LIMIT 1').get(instanceId, recipient) as SuppressionRow | undefined;
}

/** Idempotent: adding an address already on the list (in any case) keeps the first record. */
export function addSuppression(
  db: Db,
  instanceId: number,
  v: { list: SuppressionList; recipient: string; reason: string | null; source: string; mailId?: string | null; at: number },
): void {
  db.prepare(
    `INSERT INTO suppressions (instance_id, list, recipient, reason, source, mail_id, created_at)
     SELECT ?, ?, ?, ?, ?, ?, ?
     WHERE NOT EXISTS (SELECT 1 FROM suppressions WHERE instance_id = ? AND recipient = ? COLLATE NOCASE AND list = ?)
     ON CONFLICT (instance_id, list, recipient) DO NOTHING`,
  ).run(instanceId, v.list, v.recipient, v.reason, v.source, v.mailId ?? null, v.at, instanceId, v.recipient, v.list);
}

export function removeSuppression(db: Db, instanceId: number, list: SuppressionList, recipient: string): boolean {
  return db.prepare('DELETE FROM suppressions WHERE instance_id = ? AND recipient = ? COLLATE NOCASE AND list = ?').run(instanceId, recipient, list).changes > 0;
}

export function getSuppression(db: Db, instanceId: number, list: SuppressionList, id: number): SuppressionRow | undefined {
  return db.prepare('SELECT * FROM suppressions WHERE instance_id = ? AND list = ? AND id = ?').get(instanceId, list, id) as SuppressionRow | undefined;
}

export function findOnList(db: Db, instanceId: number, list: SuppressionList, recipient: string): SuppressionRow | undefined {
  return db.prepare('SELECT * FROM suppressions WHERE instance_id = ? AND recipient = ? COLLATE NOCASE AND list = ? ORDER BY id LIMIT 1').get(instanceId, recipient, list) as SuppressionRow | undefined;
}

/** One list, optionally filtered by a partial, case-insensitive recipient (spec, Text filters rule 3). */
export function listSuppressions(db: Db, instanceId: number, list: SuppressionList, q: { recipient?: string }, p: PageRequest): Page<SuppressionRow> {
  const w = new Where().add('instance_id = ?', instanceId).add('list = ?', list);
  if (q.recipient !== undefined) w.add(...containsText('recipient', q.recipient));
  return listPage<SuppressionRow>(db, { select: '*', from: `FROM suppressions ${w}`, params: w.params, orderBy: 'id' }, p);
}
