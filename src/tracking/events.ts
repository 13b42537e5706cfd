/**
 * Engagement recorded from the tracking endpoints: opens and clicks as mail_events rows with
 * their time plus the counters on the mail, and the one-click unsubscribe (RFC 8058).
 */
import type { Db } from '../store/db';
import { addSuppression } from '../store/suppressions';

interface MailRef { id: number; instance_id: number; rcpt: string; mail_id: string }

export function findMail(db: Db, mailId: string): MailRef | undefined {
  return db.prepare('SELECT id, instance_id, rcpt, mail_id FROM mails WHERE mail_id = ?').get(mailId) as MailRef | undefined;
}

export function recordEngagement(db: Db, mail: MailRef, kind: 'open' | 'click', url: string | null, at: number): void {
  db.transaction(() => {
    db.prepare('INSERT INTO mail_events (mail_row, instance_id, kind, url, at) VALUES (?, ?, ?, ?, ?)').run(mail.id, mail.instance_id, kind, url, at);
    db.prepare(`UPDATE mails SET ${kind === 'open' ? 'opens = opens + 1' : 'clicks = clicks + 1'} WHERE id = ?`).run(mail.id);
  })();
}

export function unsubscribeRecipient(db: Db, mail: MailRef, source: string, at: number): void {
  addSuppression(db, mail.instance_id, { list: 'unsubscribes', recipient: mail.rcpt, reason: 'one-click unsubscribe', source, mailId: mail.mail_id, at });
}
