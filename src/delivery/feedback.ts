/**
 * Feedback that comes back after delivery, through the inbound MX: DSN bounces (RFC 3464) turn the
 * named mail to 6 bounced and restrict its address; ARF reports (RFC 5965) add a complaint. The
 * mail is found by its signed VERP return path, or by the signed mailboxes and links the quoted
 * message carries.
 */
import type { Db } from '../store/db';
import { addSuppression } from '../store/suppressions';
import { insertMailLog } from '../store/mails';
import { finishRecipient } from './queue';
import { STATUS } from './outcome';
import { verifyLink, verifyMailbox, type LinkKind } from '../tracking/links';

/** Header-style fields of a report part (message/delivery-status, message/feedback-report). */
export function reportFields(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1].toLowerCase();
    const values = out.get(key);
    if (values) values.push(m[2].trim());
    else out.set(key, [m[2].trim()]);
  }
  return out;
}

/** One per-recipient block of a DSN (RFC 3464 §2.3). */
export interface DsnRecipient { final: string | null; original: string | null; action: string; status: string | null; diagnostic: string | null }

/** The address of a recipient field: "rfc822; <user@example.com>" -> user@example.com. */
const addressOf = (field: string | undefined): string | null => {
  if (!field) return null;
  const value = field.slice(field.indexOf(';') + 1).trim().replace(/^<(.*)>$/, '$1');
  return value ? value.toLowerCase() : null;
};

/**
 * The per-recipient blocks of a delivery-status body (blocks are separated by blank lines): those
 * with a recipient or an Action field. The per-message block has neither, unless a sloppy MTA
 * wrote its one recipient's fields there, which then counts as that recipient's block.
 */
export function dsnRecipients(text: string): DsnRecipient[] {
  // Split first: a separator line holding only spaces would read as a folded line and join blocks.
  const blocks = text.split(/\r?\n(?:[ \t]*\r?\n)+/);
  return blocks.map(reportFields).filter((f) => f.has('final-recipient') || f.has('original-recipient') || f.has('action')).map((f) => ({
    final: addressOf(f.get('final-recipient')?.[0]),
    original: addressOf(f.get('original-recipient')?.[0]),
    action: (f.get('action')?.[0] ?? '').toLowerCase(),
    status: f.get('status')?.[0]?.split(/\s/)[0] ?? null,
    // "smtp; 550 ..." or Exchange's "smtp;550 ...": the reply itself.
    diagnostic: f.get('diagnostic-code')?.[0]?.replace(/^smtp\s*;\s*/i, '') ?? null,
  }));
}

/**
 * The block that reports on `rcpt`: the one naming it (final or original recipient); else, when
 * there is a single block, that one (a forwarding host reports the address it rewrote to).
 */
export function dsnBlockFor(blocks: DsnRecipient[], rcpt: string): DsnRecipient | null {
  const address = rcpt.toLowerCase();
  return blocks.find((b) => b.final === address || b.original === address) ?? (blocks.length === 1 ? blocks[0] : null);
}

/** A block that says the mail will never arrive: Action failed with a 5.x.x Status. */
export const isPermanentFailure = (b: DsnRecipient): boolean => b.action === 'failed' && b.status !== null && /^5\.\d+\.\d+$/.test(b.status);

/** mail_ids named in a text by the addresses and links the platform writes into every copy. */
export function mailIdsIn(db: Db, text: string, secret: Buffer): string[] {
  const ids = new Set<string>();
  // Only what we signed: our mailboxes (the Return-Path and List-Unsubscribe of the quoted
  // original) and the open and unsubscribe links (/t/c/ links sign their URL too, which a
  // re-encoded body may no longer show as it was). A bare mail id proves nothing, but for a mail
  // sent before the mailboxes were signed (mailOfMailbox).
  for (const m of text.matchAll(/\b(bounces|unsubscribe)\+([A-Za-z0-9._-]+)@/gi)) {
    const mail = mailOfMailbox(db, secret, m[1], m[2]);
    if (mail) ids.add(mail.mail_id);
  }
  for (const m of text.matchAll(/\/t\/([ou])\/([A-Za-z0-9._-]+)\/([A-Za-z0-9_-]+)/g)) {
    if (verifyLink(secret, m[1] as LinkKind, m[2], m[3])) ids.add(m[2]);
  }
  return [...ids];
}

/**
 * The mail a mailbox of ours names: `<prefix>+<tail>@`, prefix `bounces` or `unsubscribe` (any
 * case), tail `<mail_id>.<sig>`. Unsigned (`<mail_id>` alone) only for a mail received before the
 * mailboxes were signed (migration 130's applied_at): it went out with unsigned ones, and a late
 * bounce or a click on its old mailto must still reach it while it is kept.
 */
export function mailOfMailbox(db: Db, secret: Buffer, prefix: string, tail: string): MailRow | undefined {
  const signed = verifyMailbox(secret, prefix.toLowerCase() === 'unsubscribe' ? 'unsubscribe' : 'bounces', tail);
  if (signed) return findMailById(db, signed);
  const mail = findMailById(db, tail.toLowerCase());
  if (!mail) return undefined;
  const since = db.prepare('SELECT applied_at FROM schema_migrations WHERE version = 130').pluck().get() as number | undefined;
  return since !== undefined && mail.received_at < since ? mail : undefined;
}

interface MailRow { id: number; instance_id: number; mail_id: string; rcpt: string; status: number; message_id: number; sender_email: string | null; received_at: number }

export function findMailById(db: Db, mailId: string): MailRow | undefined {
  return db.prepare('SELECT id, instance_id, mail_id, rcpt, status, message_id, sender_email, received_at FROM mails WHERE mail_id = ?').get(mailId) as MailRow | undefined;
}

const log = (db: Db, mail: MailRow, at: number, event: string, status: number, detail: string, response: string | null): void =>
  insertMailLog(db, mail.id, { at, event, status, detail, response });

/**
 * A permanent failure reported after the remote MTA first accepted the mail (or while we still
 * retried it): the mail ends 6 bounced. Returns the spool file to remove, if this made its
 * message's last recipient final.
 */
export function applyDsnFailure(db: Db, mail: MailRow, status: string, diagnostic: string | null, at: number): string | null {
  return db.transaction(() => {
    const response = diagnostic ?? `DSN status ${status}`;
    addSuppression(db, mail.instance_id, { list: 'restrictions', recipient: mail.rcpt, reason: response.slice(0, 500), source: 'dsn', mailId: mail.mail_id, at });
    if (mail.status === STATUS.bounced || mail.status === STATUS.dropped) return null;
    const wasPending = mail.status === 2 || mail.status === STATUS.deferred;
    db.prepare('UPDATE mails SET status = 6, final_at = ?, next_attempt_at = NULL, claimed_at = NULL WHERE id = ?').run(at, mail.id);
    log(db, mail, at, 'bounced', STATUS.bounced, `bounce report (DSN) received: status ${status}`, response);
    return wasPending ? finishRecipient(db, mail.message_id) : null;
  })();
}

export function applyComplaint(db: Db, mail: MailRow, feedbackType: string, at: number): void {
  db.transaction(() => {
    addSuppression(db, mail.instance_id, { list: 'complaints', recipient: mail.rcpt, reason: `ARF ${feedbackType}`, source: 'arf', mailId: mail.mail_id, at });
    // A provider repeating its report is one complaint: one record, one log entry.
    if (db.prepare("SELECT 1 FROM mail_logs WHERE mail_row = ? AND event = 'complaint'").get(mail.id)) return;
    log(db, mail, at, 'complaint', mail.status, `complaint (ARF feedback-type ${feedbackType}) received`, null);
  })();
}

export function applyUnsubscribeMail(db: Db, mail: MailRow, at: number): void {
  addSuppression(db, mail.instance_id, { list: 'unsubscribes', recipient: mail.rcpt, reason: 'unsubscribe by mail', source: 'mailto', mailId: mail.mail_id, at });
}

/** The first SMTP reply a bounce's text quotes (`550 5.1.1 ...`), or null. */
export function quotedReply(text: string): { reply: string; status: string } | null {
  const m = /\b([245]\d\d)[ -]([245]\.\d{1,3}\.\d{1,3})\b[^\r\n]*/.exec(text);
  return m ? { reply: m[0].trim(), status: m[2] } : null;
}

/**
 * Plain-text bounces, which carry no RFC 3464 report: the recipients they report as failed for
 * good, lowercased, each with the SMTP reply quoted for it and its status (null: none quoted).
 * - Exim names them in X-Failed-Recipients, which it writes for permanent failures only (its
 *   delay warnings carry none, a retry timeout does); the first reply its text quotes.
 * - qmail-send writes "Hi. This is the qmail-send program": one paragraph per address, opened by
 *   `<address>:`, before "--- Below this line is a copy of the message" (or "--- Enclosed are the
 *   original headers"). It bounces only what it has given up on: a permanent error, or a message
 *   too long in its queue.
 */
export function plainBounceFailures(text: string, failedRecipients: string[]): Map<string, ReturnType<typeof quotedReply>> {
  const failures = new Map<string, ReturnType<typeof quotedReply>>();
  if (failedRecipients.length > 0) {
    const reply = quotedReply(text);
    for (const rcpt of failedRecipients) failures.set(rcpt, reply);
    return failures;
  }
  if (!/^Hi\. This is the qmail-send program/m.test(text)) return failures;
  const end = text.search(/^--- (?:Below this line is a copy of the message|Enclosed are the original headers)/m);
  for (const block of (end < 0 ? text : text.slice(0, end)).split(/\r?\n[ \t]*\r?\n/)) {
    const address = /^<([^<>\s]+@[^<>\s]+)>:/.exec(block.trim());
    if (address) failures.set(address[1].toLowerCase(), quotedReply(block));
  }
  return failures;
}
