/**
 * GET /v1/activities/opens: open events of the instance, filtered like the mail list (the date
 * window applies to the time of the open), then grouped per the spec's table. Only the ungrouped
 * list counts its total; grouped lists page by has_more.
 */
import type { Db } from '../store/db';
import { likeContains, likePrefix } from '../store/db';
import { listPage, Where, type Page, type PageRequest } from '../store/page';
import type { MailFilter } from '../store/mails';
import { iso } from '../lib/time';

export type OpensGroup = 'none' | 'mail_id' | 'msg_id';

function where(instanceId: number, f: MailFilter): Where {
  const w = new Where().add('e.instance_id = ?', instanceId).add("e.kind = 'open'").add('e.at >= ?', f.from).add('e.at < ?', f.to);
  if (f.msgId !== undefined) w.add('m.msg_id = ?', f.msgId);
  if (f.mailId !== undefined) w.add('m.mail_id = ?', f.mailId);
  if (f.senderId !== undefined) w.add('m.sender_id = ?', f.senderId);
  if (f.recipient !== undefined) {
    if (f.recipientPrefix) w.add("m.rcpt LIKE ? ESCAPE '\\'", likePrefix(f.recipient));
    else w.add('m.rcpt = ?', f.recipient);
  }
  if (f.customMsgId !== undefined) w.add('m.custom_msg_id = ?', f.customMsgId);
  if (f.customGroupCode !== undefined) w.add('m.custom_group_code = ?', f.customGroupCode);
  if (f.subject !== undefined) w.add("m.subject LIKE ? ESCAPE '\\'", likeContains(f.subject));
  return w;
}

interface Row {
  mail_id: string; msg_id: string; rcpt: string; sender_email: string | null; subject: string; sent_at: number | null;
  custom_msg_id: string | null; custom_group_code: string | null; at: number; open_count: number; first_at: number; last_at: number;
  recipients_opened: number; rcpt_count: number;
}

export function listOpens(db: Db, instanceId: number, f: MailFilter, group: OpensGroup, p: PageRequest): Page<Record<string, unknown>> {
  const w = where(instanceId, f);
  const base = `FROM mail_events e JOIN mails m ON m.id = e.mail_row ${w}`;
  const cols = 'm.mail_id, m.msg_id, m.rcpt, m.sender_email, m.subject, m.sent_at, m.custom_msg_id, m.custom_group_code';
  if (group === 'none') {
    const page = listPage<Row>(db, { select: `${cols}, e.at`, from: base, params: w.params, orderBy: 'e.at DESC, e.id DESC' }, p);
    return { ...page, items: page.items.map((r) => ({
      mail_id: r.mail_id, msg_id: r.msg_id, to: r.rcpt, sender: r.sender_email, opened_at: iso(r.at), sent_at: iso(r.sent_at),
      custom_msg_id: r.custom_msg_id, custom_group_code: r.custom_group_code,
    })) };
  }
  const agg = 'COUNT(*) AS open_count, MIN(e.at) AS first_at, MAX(e.at) AS last_at';
  if (group === 'mail_id') {
    const page = listPage<Row>(db, { select: `${cols}, ${agg}`, from: `${base} GROUP BY m.id`, params: w.params, orderBy: 'last_at DESC, m.id DESC', withTotal: false }, p);
    return { ...page, items: page.items.map((r) => ({
      mail_id: r.mail_id, msg_id: r.msg_id, to: r.rcpt, sender: r.sender_email, open_count: r.open_count,
      first_opened_at: iso(r.first_at), last_opened_at: iso(r.last_at), sent_at: iso(r.sent_at),
      custom_msg_id: r.custom_msg_id, custom_group_code: r.custom_group_code,
    })) };
  }
  const select = `${cols}, ${agg}, COUNT(DISTINCT m.id) AS recipients_opened, (SELECT COUNT(*) FROM mails x WHERE x.message_id = m.message_id) AS rcpt_count`;
  const page = listPage<Row>(db, { select, from: `${base} GROUP BY m.message_id`, params: w.params, orderBy: 'last_at DESC, m.message_id DESC', withTotal: false }, p);
  return { ...page, items: page.items.map((r) => ({
    msg_id: r.msg_id, sender: r.sender_email, subject: r.subject, open_count: r.open_count, recipients_opened: r.recipients_opened,
    rcpt_count: r.rcpt_count, first_opened_at: iso(r.first_at), last_opened_at: iso(r.last_at),
    custom_msg_id: r.custom_msg_id, custom_group_code: r.custom_group_code,
  })) };
}
