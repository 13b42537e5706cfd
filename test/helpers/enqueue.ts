/**
 * Queues a message the way the accept path leaves it (spool file + messages/mails rows, status 2,
 * due now) and wakes delivery: lets the delivery tests drive the real delivery loop whatever the
 * state of the accept door. Assembled with nodemailer's MailComposer like accept does.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Db } from '../../src/store/db';

/** The parts of a running service (or of a data dir opened by the test) that queueing needs. */
export interface QueueTarget { db: Db; config: { dataDir: string; hostname: string }; delivery?: { wake(): void } }

export interface QueueOptions {
  instanceId: number;
  from: string;
  to: string[];
  subject?: string;
  html?: string;
  text?: string;
  attachmentBytes?: number;
  receivedAt?: number;
}

export interface Queued { msgId: string; mailIds: string[]; spoolFile: string }

export async function queueMail(svc: QueueTarget, o: QueueOptions): Promise<Queued> {
  const msgId = `msg${crypto.randomBytes(6).toString('hex')}`;
  const raw = await new MailComposer({
    from: o.from, to: o.to, subject: o.subject ?? 'Hello', html: o.html ?? '<p>Hello <a href="https://example.org/a?x=1&amp;y=2">link</a></p>',
    text: o.text, messageId: `<${msgId}@${svc.config.hostname}>`,
  }).compile().build();
  const spoolFile = `${msgId}.eml`;
  const dir = path.join(svc.config.dataDir, 'messages');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, spoolFile), raw);
  const now = o.receivedAt ?? Date.now();
  const db = svc.db;
  const mailIds = o.to.map((_, i) => `${msgId}.r${i}`); // dotted like accept's ids
  db.transaction(() => {
    const m = db.prepare(
      `INSERT INTO messages (msg_id, instance_id, sender_email, subject, spool_file, size, attachment_bytes, door, pending, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'http', ?, ?)`,
    ).run(msgId, o.instanceId, o.from, o.subject ?? 'Hello', spoolFile, raw.length, o.attachmentBytes ?? 0, o.to.length, now);
    o.to.forEach((rcpt, i) => {
      db.prepare(
        `INSERT INTO mails (mail_id, message_id, instance_id, msg_id, rcpt, rcpt_domain, subject, sender_email, status, next_attempt_at, received_at, queued_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 2, ?, ?, ?)`,
      ).run(mailIds[i], m.lastInsertRowid, o.instanceId, msgId, rcpt, rcpt.split('@')[1], o.subject ?? 'Hello', o.from, now, now, now);
    });
  })();
  svc.delivery?.wake();
  return { msgId, mailIds, spoolFile };
}

export interface MailState { status: number; attempts: number; opens: number; clicks: number; sent_at: number | null; next_attempt_at: number | null }

export function mailState(svc: { db: Db }, mailId: string): MailState {
  return svc.db.prepare('SELECT status, attempts, opens, clicks, sent_at, next_attempt_at FROM mails WHERE mail_id = ?').get(mailId) as MailState;
}

export function mailLogs(svc: { db: Db }, mailId: string): { event: string; status: number; detail: string | null; response: string | null }[] {
  return svc.db.prepare('SELECT l.event, l.status, l.detail, l.response FROM mail_logs l JOIN mails m ON m.id = l.mail_row WHERE m.mail_id = ? ORDER BY l.id').all(mailId) as never;
}
