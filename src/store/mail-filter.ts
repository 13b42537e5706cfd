/**
 * The mail filters of every mail list (GET /v1/mails, the activity lists and their exports) as
 * SQL on a `mails` alias, written once: the rules of GET /v1/mails (exact or prefix recipient, partial subject with `%` and
 * `_` literal). The date window is left to the caller: reception for mail lists, event time for
 * engagement lists.
 */
import { containsText, likePrefix } from './db';
import { Where, type ListQuery } from './page';
import type { MailFilter } from './mails';

export function addMailFilters(w: Where, f: MailFilter, m = 'm'): Where {
  if (f.msgId !== undefined) w.add(`${m}.msg_id = ?`, f.msgId);
  if (f.mailId !== undefined) w.add(`${m}.mail_id = ?`, f.mailId);
  if (f.senderId !== undefined) w.add(`${m}.sender_id = ?`, f.senderId);
  if (f.recipient !== undefined) {
    if (f.recipientPrefix) w.add(`${m}.rcpt LIKE ? ESCAPE '\\'`, likePrefix(f.recipient));
    else w.add(`${m}.rcpt = ? COLLATE NOCASE`, f.recipient);
  }
  if (f.customMsgId !== undefined) w.add(`${m}.custom_msg_id = ?`, f.customMsgId);
  if (f.customGroupCode !== undefined) w.add(`${m}.custom_group_code = ?`, f.customGroupCode);
  if (f.subject !== undefined) w.add(...containsText(`${m}.subject`, f.subject));
  if (f.status !== undefined) w.add(`${m}.status = ?`, f.status);
  if (f.opened === 'opened') w.add(`${m}.opens > 0`);
  if (f.opened === 'unopened') w.add(`${m}.status = 3 AND ${m}.opens = 0`);
  return w;
}

/**
 * The index a mail list (`FROM mails m ...`, newest first) reads, named. The store never runs
 * ANALYZE, and without statistics SQLite walks mails_by_received for the ORDER BY and reads the
 * whole window to find the few rows of a msg_id, a recipient or a rare status (300-500 ms per
 * request at a million mails, bench/lists.ts). Each equality filter has an index ending in
 * received_at, which gives the same order over its own rows; the likely most selective present
 * filter picks it. A mail_id is left to its unique index, which the planner already takes.
 */
export function mailListIndex(f: MailFilter): string {
  if (f.mailId !== undefined) return '';
  if (f.msgId !== undefined) return 'INDEXED BY mails_by_msg';
  if (f.customMsgId !== undefined) return 'INDEXED BY mails_by_custom_msg';
  if (f.recipient !== undefined && !f.recipientPrefix) return 'INDEXED BY mails_by_rcpt';
  if (f.customGroupCode !== undefined) return 'INDEXED BY mails_by_group';
  if (f.status !== undefined) return 'INDEXED BY mails_by_status';
  if (f.senderId !== undefined) return 'INDEXED BY mails_by_sender';
  return '';
}

/**
 * A mail list's query, newest first, windowed on reception (GET /v1/mails, /v1/activities/sent
 * and bounced, their exports): `select` on the mails that pass every filter, read through the
 * index mailListIndex picks.
 */
export function mailListQuery(instanceId: number, f: MailFilter, select = 'm.*'): ListQuery {
  const w = new Where().add('m.instance_id = ?', instanceId).add('m.received_at >= ?', f.from).add('m.received_at < ?', f.to);
  addMailFilters(w, f);
  return { select, from: `FROM mails m ${mailListIndex(f)} ${w}`, params: w.params, orderBy: 'm.received_at DESC, m.id DESC', withTotal: !isCostlyCount(f) };
}

/**
 * Whether counting the rows of a mail list is costly (total_items null), by the rule of
 * listMails: a prefix recipient, a partial subject or `opened` scan the window, unless an exact
 * id pins the rows to a handful.
 */
export function isCostlyCount(f: MailFilter): boolean {
  if (f.msgId !== undefined || f.mailId !== undefined || (f.recipient !== undefined && !f.recipientPrefix)) return false;
  return (f.recipient !== undefined && Boolean(f.recipientPrefix)) || f.subject !== undefined || f.opened === 'opened' || f.opened === 'unopened';
}
