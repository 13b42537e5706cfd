/**
 * Mails: one row per recipient of a message, with its status and its log (mail_logs, the
 * customer-visible events). List queries stay on this one table: the message columns the
 * filters need are copied onto each mail row at acceptance.
 */
import type { Db } from './db';
import { mailListQuery } from './mail-filter';
import { listPage, type Page, type PageRequest } from './page';

export interface MailRow {
  id: number;
  mail_id: string;
  message_id: number;
  instance_id: number;
  msg_id: string;
  rcpt: string;
  rcpt_domain: string;
  rcpt_kind: string;
  subject: string;
  sender_id: number | null;
  sender_email: string | null;
  custom_msg_id: string | null;
  custom_group_code: string | null;
  status: number;
  charged: number;
  opens: number;
  clicks: number;
  attempts: number;
  next_attempt_at: number | null;
  received_at: number;
  queued_at: number | null;
  schedule_at: number | null;
  sent_at: number | null;
  final_at: number | null;
}

export interface MailInsert {
  mailId: string;
  messageId: number;
  msgId: string;
  rcpt: string;
  rcptDomain: string;
  rcptKind: 'to' | 'cc' | 'bcc';
  subject: string;
  senderId: number | null;
  senderEmail: string | null;
  customMsgId: string | null;
  customGroupCode: string | null;
  status: number;
  charged: boolean;
  nextAttemptAt: number | null;
  receivedAt: number;
  queuedAt: number | null;
  sentAt: number | null;
  finalAt: number | null;
}

export interface MailLogInsert { at: number; event: string; status: number | null; detail?: string | null; response?: string | null }

export function insertMail(db: Db, instanceId: number, m: MailInsert): number {
  const r = db.prepare(
    `INSERT INTO mails (mail_id, message_id, instance_id, msg_id, rcpt, rcpt_domain, rcpt_kind, subject, sender_id, sender_email,
       custom_msg_id, custom_group_code, status, charged, next_attempt_at, received_at, queued_at, sent_at, final_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(m.mailId, m.messageId, instanceId, m.msgId, m.rcpt, m.rcptDomain, m.rcptKind, m.subject, m.senderId, m.senderEmail,
    m.customMsgId, m.customGroupCode, m.status, m.charged ? 1 : 0, m.nextAttemptAt, m.receivedAt, m.queuedAt, m.sentAt, m.finalAt);
  return Number(r.lastInsertRowid);
}

export function insertMailLog(db: Db, mailRow: number, l: MailLogInsert): void {
  insertMailLogs(db, mailRow, [l]);
}

/**
 * Log entries of one mail in one statement (the accept path writes received + queued/dropped
 * together: one statement less per mail). Ids follow the VALUES order, so the log reads back in
 * the order given.
 */
export function insertMailLogs(db: Db, mailRow: number, logs: readonly MailLogInsert[]): void {
  if (logs.length === 0) return;
  const values = logs.map(() => '(?, ?, ?, ?, ?, ?)').join(', ');
  db.prepare(`INSERT INTO mail_logs (mail_row, at, event, status, detail, response) VALUES ${values}`)
    .run(...logs.flatMap((l) => [mailRow, l.at, l.event, l.status, l.detail ?? null, l.response ?? null]));
}

export interface MailFilter {
  from: number;
  to: number;
  msgId?: string;
  mailId?: string;
  senderId?: number;
  recipient?: string;
  recipientPrefix?: boolean;
  customMsgId?: string;
  customGroupCode?: string;
  subject?: string;
  status?: number;
  opened?: 'all' | 'opened' | 'unopened';
}

/** Newest first; total_items null where counting is costly (mail-filter.ts isCostlyCount). */
export function listMails(db: Db, instanceId: number, f: MailFilter, p: PageRequest): Page<MailRow> {
  return listPage<MailRow>(db, mailListQuery(instanceId, f), p);
}

export function findMail(db: Db, instanceId: number, mailId: string): MailRow | undefined {
  return db.prepare('SELECT * FROM mails WHERE instance_id = ? AND mail_id = ?').get(instanceId, mailId) as MailRow | undefined;
}

export interface MailLogRow { id: number; at: number; event: string; status: number | null; detail: string | null; response: string | null }

/** The log of one mail (its row id, found through findMail with the instance), oldest first. */
export function mailLogs(db: Db, instanceId: number, mailRow: number, p: PageRequest): Page<MailLogRow> {
  return listPage<MailLogRow>(db, {
    select: 'l.id, l.at, l.event, l.status, l.detail, l.response',
    from: 'FROM mail_logs l JOIN mails m ON m.id = l.mail_row WHERE m.instance_id = ? AND l.mail_row = ?',
    params: [instanceId, mailRow], orderBy: 'l.id',
  }, p);
}
