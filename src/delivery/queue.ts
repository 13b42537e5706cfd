/**
 * The queue is a query over indexed mail rows (DESIGN rule 3): due scans, claims, and the state
 * change of an outcome with its log row, suppression and spool bookkeeping in one transaction.
 */
import { withoutSync, type Db } from '../store/db';
import { addSuppression } from '../store/suppressions';
import { readFresh } from '../store/fresh';
import { insertMailLog } from '../store/mails';
import { nextAttemptAt, retryDelay } from './retry';
import { sandboxCapture } from '../lib/address';
import { STATUS, type Outcome } from './outcome';

export interface DueRow { id: number; rcpt_domain: string }

/** Due mails, oldest due first, read through the partial index mails_due. */
export function scanDue(db: Db, now: number, limit: number): DueRow[] {
  return db.prepare('SELECT id, rcpt_domain FROM mails WHERE status IN (2, 5) AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?')
    .all(now, limit) as DueRow[];
}

/** The earliest next attempt of any queued or deferred mail (null: nothing waits). */
export function nextDue(db: Db): number | null {
  const r = db.prepare('SELECT MIN(next_attempt_at) AS at FROM mails WHERE status IN (2, 5)').get() as { at: number | null };
  return r.at;
}

/** Marks mails as taken by this process; the lease keeps them out of later scans. */
export function claimMails(db: Db, ids: readonly number[], now: number, leaseMs: number): void {
  const stmt = db.prepare('UPDATE mails SET claimed_at = ?, next_attempt_at = ? WHERE id = ?');
  // Not synced: a claim lost with the machine leaves the mail due, which is what a restart wants.
  withoutSync(db, () => db.transaction(() => {
    for (const id of ids) stmt.run(now, now + leaseMs, id);
  })());
}

/** Claims left by a crash (or not started before a stop) become due now: at-least-once delivery. */
export function releaseClaims(db: Db, now: number, ids?: readonly number[]): number {
  if (ids) {
    const stmt = db.prepare('UPDATE mails SET claimed_at = NULL, next_attempt_at = ? WHERE id = ? AND claimed_at IS NOT NULL');
    return db.transaction(() => ids.reduce((n, id) => n + stmt.run(now, id).changes, 0))();
  }
  return db.prepare('UPDATE mails SET claimed_at = NULL, next_attempt_at = CASE WHEN status IN (2, 5) THEN ? ELSE next_attempt_at END WHERE claimed_at IS NOT NULL').run(now).changes;
}

export interface AttemptRow {
  id: number; mail_id: string; instance_id: number; rcpt: string; rcpt_domain: string; status: number; attempts: number;
  received_at: number; charged: number; message_id: number; msg_id: string; door: string; spool_file: string; sender_email: string | null;
  envelope_from: string | null; attachment_bytes: number; attachment_max_bytes: number;
  /** The first suppression list holding the recipient when the row was read (case-insensitive, as the accept path's findSuppression), or null. */
  suppressed_list: string | null;
  /** The sender (null: none registered), whether it requires consent now, and whether the send was in test mode. */
  sender_id: number | null; consent_required: number | null; test_mode: number;
}

// One statement reads the attempt's row and its suppression: on a busy loop each statement costs
// ~20 µs whatever it does, so the count per mail is what the delivery pays.
const attemptSelect = `SELECT m.id, m.mail_id, m.instance_id, m.rcpt, m.rcpt_domain, m.status, m.attempts, m.received_at, m.charged, m.message_id,
            m.msg_id, g.door, g.spool_file, g.sender_email, g.envelope_from, g.attachment_bytes, i.attachment_max_bytes,
            m.sender_id, g.test_mode, (SELECT r.is_consent_required FROM senders r WHERE r.id = m.sender_id) AS consent_required,
            (SELECT s.list FROM suppressions s WHERE s.instance_id = m.instance_id AND s.recipient = m.rcpt COLLATE NOCASE ORDER BY s.id LIMIT 1) AS suppressed_list
       FROM mails m JOIN messages g ON g.id = m.message_id JOIN instances i ON i.id = m.instance_id`;

export function loadAttempt(db: Db, id: number): AttemptRow | undefined {
  return db.prepare(`${attemptSelect} WHERE m.id = ?`).get(id) as AttemptRow | undefined;
}

export interface SigningKeyRow { id: number; domain: string; selector: string; private_key: string }

/**
 * The active DKIM key of the sender's domain in that instance, if the domain has keys, through
 * the store's fresh cache: a rotation by the CLI is seen within a second (CONTRACT §6).
 */
export function activeSigningKey(db: Db, instanceId: number, domain: string): SigningKeyRow | undefined {
  return readFresh(db, `dkim-key:${instanceId}:${domain}`, () => readSigningKey(db, instanceId, domain));
}

function readSigningKey(db: Db, instanceId: number, domain: string): SigningKeyRow | undefined {
  return db.prepare(
    `SELECT k.id, d.domain, k.selector, k.private_key FROM domains d JOIN dkim_keys k ON k.domain_id = d.id AND k.is_active = 1
      WHERE d.instance_id = ? AND d.domain = ?`,
  ).get(instanceId, domain) as SigningKeyRow | undefined;
}

export interface RetryPolicy { retryDelays: readonly number[]; maxQueueAge: number }

/** What writeOutcome did: the outcome as written (a deferral past the queue age is a bounce), and the spool file freed. */
export interface Written { kind: Outcome['kind'] | null; file: string | null }

/**
 * Writes an outcome: the mail's state, one mail_logs row with the remote reply, the restriction of a
 * hard bounce, and the message's pending count. Returns the outcome as written (null: the mail was
 * already final) and the spool file to remove when the last recipient of its message became
 * final. Call inside a transaction.
 */
export function writeOutcome(db: Db, mail: AttemptRow, outcome: Outcome, now: number, policy: RetryPolicy): Written {
  let o = outcome;
  const tried = o.kind !== 'dropped' && o.detail !== sandboxCapture.detail && !(o.kind === 'bounced' && o.tried === false);
  const attempts = mail.attempts + (tried ? 1 : 0);
  let next: number | null = null;
  if (o.kind === 'deferred') {
    next = nextAttemptAt({ attempt: attempts, receivedAt: mail.received_at, now, delays: policy.retryDelays, maxQueueAge: policy.maxQueueAge });
    if (next === null) o = { kind: 'bounced', scope: o.scope, response: o.response, restrict: false, detail: expiredDetail(policy, o.response, o.detail) };
  }
  const status = o.kind === 'sent' ? STATUS.sent : o.kind === 'deferred' ? STATUS.deferred : o.kind === 'bounced' ? STATUS.bounced : STATUS.dropped;
  const final = status !== STATUS.deferred;
  const changed = db.prepare(
    `UPDATE mails SET status = ?, attempts = ?, next_attempt_at = ?, claimed_at = NULL, sent_at = CASE WHEN ? = 3 THEN ? ELSE sent_at END,
            final_at = ?, charged = CASE WHEN ? THEN 0 ELSE charged END WHERE id = ? AND status IN (2, 5)`,
  ).run(status, attempts, next, status, now, final ? now : null, o.kind === 'dropped' && o.uncharge ? 1 : 0, mail.id).changes;
  if (changed === 0) return { kind: null, file: null }; // already final (a DSN raced the attempt): the first word stands
  const response = o.kind === 'dropped' ? null : o.response;
  insertMailLog(db, mail.id, { at: now, event: o.kind, status, detail: o.detail ?? null, response });
  if (o.kind === 'bounced' && o.restrict) {
    addSuppression(db, mail.instance_id, { list: 'restrictions', recipient: mail.rcpt, reason: o.response.slice(0, 500), source: 'bounce', mailId: mail.mail_id, at: now });
  }
  if (o.kind === 'dropped' && o.uncharge && mail.charged) uncharge(db, mail.instance_id, mail.received_at);
  return { kind: o.kind, file: final ? finishRecipient(db, mail.message_id) : null };
}

const expiredDetail = (policy: RetryPolicy, response: string, detail: string | undefined | null): string =>
  `expired: still undeliverable after the maximum queue age (${policy.maxQueueAge} s); last: ${response}${detail ? ` (${detail})` : ''}`;

/**
 * CONTRACT §2: ESTAFETA_MAX_QUEUE_AGE is when "a still-deferred mail is bounced". A deferred
 * mail whose retry, by ESTAFETA_RETRY_DELAYS, falls after that moment was woken at the moment
 * itself (nextAttemptAt): it is bounced then, with its last remote reply, without a try ahead of
 * its schedule; no restriction, as for a deferral past the age. A retry that was due before the
 * age and comes late (the service was down, a backlog) is still made, as is the first attempt of
 * a mail never tried: their temporary failure bounces at once (writeOutcome). Called after the
 * checks that drop a mail (suppression, consent, attachment limit), which win over the expiry.
 */
export function expiredOutcome(db: Db, mail: AttemptRow, now: number, policy: RetryPolicy): Outcome | null {
  const expiresAt = mail.received_at + policy.maxQueueAge * 1000;
  if (mail.status !== STATUS.deferred || now < expiresAt) return null;
  const last = db.prepare(`SELECT at, response, detail FROM mail_logs WHERE mail_row = ? AND event = 'deferred' ORDER BY id DESC LIMIT 1`)
    .get(mail.id) as { at: number; response: string | null; detail: string | null } | undefined;
  if (last && last.at + retryDelay(mail.attempts, policy.retryDelays) * 1000 <= expiresAt) return null; // an overdue retry
  const response = last?.response ?? '451 4.4.7 delivery time expired';
  return { kind: 'bounced', scope: 'message', response, restrict: false, tried: false, detail: expiredDetail(policy, response, last?.detail) };
}

/** One recipient of the message is final; returns its spool file when it was the last one. */
export function finishRecipient(db: Db, messageRow: number): string | null {
  const r = db.prepare('UPDATE messages SET pending = pending - 1 WHERE id = ? RETURNING pending, spool_file').get(messageRow) as { pending: number; spool_file: string } | undefined;
  return r && r.pending <= 0 ? r.spool_file : null;
}

/** "Not charged" (CONTRACT §6): the send no longer counts against the quota of its cycle. */
function uncharge(db: Db, instanceId: number, receivedAt: number): void {
  db.prepare(
    `UPDATE send_usage SET sent = sent - 1 WHERE instance_id = ? AND sent > 0
       AND cycle_start = (SELECT MAX(cycle_start) FROM send_usage WHERE instance_id = ? AND cycle_start <= ?)`,
  ).run(instanceId, instanceId, receivedAt);
}
