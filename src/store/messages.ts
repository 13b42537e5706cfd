/** Messages: one row per accepted send (msg_id), pointing at its bytes in the spool. */
import type { Db } from './db';

export interface MessageInsert {
  msgId: string;
  senderId: number | null;
  senderEmail: string | null;
  envelopeFrom: string | null;
  subject: string;
  spoolFile: string;
  size: number;
  attachmentBytes: number;
  category: string | null;
  customMsgId: string | null;
  customGroupCode: string | null;
  testMode: boolean;
  door: 'http' | 'smtp';
  /** Recipients not yet final (queued); the spool file is removed when it reaches 0. */
  pending: number;
  receivedAt: number;
}

export function insertMessage(db: Db, instanceId: number, m: MessageInsert): number {
  const r = db.prepare(
    `INSERT INTO messages (msg_id, instance_id, sender_id, sender_email, envelope_from, subject, spool_file, size, attachment_bytes,
       category, custom_msg_id, custom_group_code, test_mode, door, pending, received_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(m.msgId, instanceId, m.senderId, m.senderEmail, m.envelopeFrom, m.subject, m.spoolFile, m.size, m.attachmentBytes,
    m.category, m.customMsgId, m.customGroupCode, m.testMode ? 1 : 0, m.door, m.pending, m.receivedAt);
  return Number(r.lastInsertRowid);
}

/** Registers a category slug on first use (idempotent). */
export function registerCategory(db: Db, instanceId: number, slug: string, at: number): void {
  db.prepare('INSERT INTO categories (instance_id, slug, created_at) VALUES (?, ?, ?) ON CONFLICT (instance_id, slug) DO NOTHING').run(instanceId, slug, at);
}

/** Adds `count` charged sends to the instance's usage of the cycle starting at cycleStart. */
export function chargeSends(db: Db, instanceId: number, cycleStart: number, count: number): void {
  if (count === 0) return;
  db.prepare('INSERT INTO send_usage (instance_id, cycle_start, sent) VALUES (?, ?, ?) ON CONFLICT (instance_id, cycle_start) DO UPDATE SET sent = sent + excluded.sent')
    .run(instanceId, cycleStart, count);
}

/** Messages with recipients still to deliver: the partial index messages_live counts them. */
export function queuedMessageCount(db: Db): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM messages INDEXED BY messages_live WHERE pending > 0').get() as { n: number }).n;
}

/**
 * Whether a message still to deliver keeps bytes in this spool file: a whole legacy file, or a
 * segment its reference `<file>:<offset>:<length>` points into (':' < ';' bounds the range).
 * One probe of the partial index messages_live per file, whatever the size of the queue.
 */
export function spoolFileIsLive(db: Db, file: string): boolean {
  return db.prepare('SELECT 1 FROM messages WHERE pending > 0 AND (spool_file = ? OR (spool_file > ? AND spool_file < ?)) LIMIT 1')
    .get(file, `${file}:`, `${file};`) !== undefined;
}

/** Messages received before `cutoff`, oldest first (the retention purge works in batches). */
export function messagesReceivedBefore(db: Db, cutoff: number, limit: number): { id: number; spool_file: string }[] {
  return db.prepare('SELECT id, spool_file FROM messages WHERE received_at < ? ORDER BY received_at LIMIT ?').all(cutoff, limit) as { id: number; spool_file: string }[];
}

/** Deletes a message with its mails (their logs and events cascade). */
export function deleteMessage(db: Db, id: number): void {
  db.prepare('DELETE FROM mails WHERE message_id = ?').run(id);
  db.prepare('DELETE FROM messages WHERE id = ?').run(id);
}
