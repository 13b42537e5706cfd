/**
 * The mail filters of every mail list (GET /v1/mails, the activity lists and their exports) as
 * SQL on a `mails` alias, written once: the rules of GET /v1/mails (exact or prefix recipient, partial subject with `%` and
 * `_` literal). The date window is left to the caller: reception for mail lists, event time for
 * engagement lists.
 */
import { containsText, likePrefix } from './db';
import type { Where } from './page';
import type { MailFilter } from './mails';

export function addMailFilters(w: Where, f: MailFilter, m = 'm'): Where {
  if (f.msgId !== undefined) w.add(`${m}.msg_id = ?`, f.msgId);
  if (f.mailId !== undefined) w.add(`${m}.mail_id = ?`, f.mailId);
  if (f.senderId !== undefined) w.add(`${m}.sender_id = ?`, f.senderId);
  if (f.recipient !== undefined) {
    if (f.recipientPrefix) w.add(`${m}.rcpt LIKE ? ESCAPE '\\'`, likePrefix(f.recipient));
    else w.add(`${m}.rcpt = ?`, f.recipient);
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
 * Whether counting the rows of a mail list is costly (total_items null), by the rule of
 * listMails: a prefix recipient, a partial subject or `opened` scan the window, unless an exact
 * id pins the rows to a handful.
 */
export function isCostlyCount(f: MailFilter): boolean {
  if (f.msgId !== undefined || f.mailId !== undefined || (f.recipient !== undefined && !f.recipientPrefix)) return false;
  return (f.recipient !== undefined && Boolean(f.recipientPrefix)) || f.subject !== undefined || f.opened === 'opened' || f.opened === 'unopened';
}
