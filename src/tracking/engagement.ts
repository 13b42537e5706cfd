/**
 * Engagement activity (opens and clicks, mail_events rows) as the spec's opens table describes
 * it: filtered like the mail list with the date window on the event time, then one record per
 * event (group_by=none), per recipient (mail_id) or per message (msg_id). GET /v1/activities/clicks
 * pages it; the opens and clicks exports stream it. Only the ungrouped list counts its total.
 */
import type { Db } from '../store/db';
import type { MailFilter } from '../store/mails';
import { addMailFilters } from '../store/mail-filter';
import { listPage, Where, type ListQuery, type Page, type PageRequest } from '../store/page';
import { iso } from '../lib/time';

export type EngagementKind = 'open' | 'click';
export type EngagementGroup = 'none' | 'mail_id' | 'msg_id';

export interface EngagementRow {
  mail_id: string; msg_id: string; rcpt: string; sender_email: string | null; subject: string; sent_at: number | null;
  custom_msg_id: string | null; custom_group_code: string | null; url: string | null; at: number; n: number; first_at: number; last_at: number;
  recipients: number; rcpt_count: number;
}

type Item = Record<string, unknown>;

/** Field names per kind: opened_at / clicked_at, open_count / click_count, … */
function names(kind: EngagementKind) {
  const [verb, noun] = kind === 'open' ? ['opened', 'open'] : ['clicked', 'click'];
  return { at: `${verb}_at`, count: `${noun}_count`, first: `first_${verb}_at`, last: `last_${verb}_at`, recipients: `recipients_${verb}` };
}

/** The item fields of a list, in order (the CSV header of its export). */
export function engagementColumns(kind: EngagementKind, group: EngagementGroup): string[] {
  const n = names(kind);
  const tail = ['custom_msg_id', 'custom_group_code'];
  if (group === 'none') return ['mail_id', 'msg_id', 'to', 'sender', ...(kind === 'click' ? ['url'] : []), n.at, 'sent_at', ...tail];
  if (group === 'mail_id') return ['mail_id', 'msg_id', 'to', 'sender', n.count, n.first, n.last, 'sent_at', ...tail];
  return ['msg_id', 'sender', 'subject', n.count, n.recipients, 'rcpt_count', n.first, n.last, ...tail];
}

export function presentEngagement(kind: EngagementKind, group: EngagementGroup): (r: EngagementRow) => Item {
  const n = names(kind);
  const ids = (r: EngagementRow) => ({ mail_id: r.mail_id, msg_id: r.msg_id, to: r.rcpt, sender: r.sender_email });
  const tail = (r: EngagementRow) => ({ custom_msg_id: r.custom_msg_id, custom_group_code: r.custom_group_code });
  if (group === 'none') {
    return (r) => ({ ...ids(r), ...(kind === 'click' ? { url: r.url } : {}), [n.at]: iso(r.at), sent_at: iso(r.sent_at), ...tail(r) });
  }
  if (group === 'mail_id') {
    return (r) => ({ ...ids(r), [n.count]: r.n, [n.first]: iso(r.first_at), [n.last]: iso(r.last_at), sent_at: iso(r.sent_at), ...tail(r) });
  }
  return (r) => ({
    msg_id: r.msg_id, sender: r.sender_email, subject: r.subject, [n.count]: r.n, [n.recipients]: r.recipients, rcpt_count: r.rcpt_count,
    [n.first]: iso(r.first_at), [n.last]: iso(r.last_at), ...tail(r),
  });
}

/** The query of one engagement list; mail_events_by_instance (instance_id, kind, at) serves the window. */
export function engagementQuery(instanceId: number, kind: EngagementKind, f: MailFilter, group: EngagementGroup): ListQuery {
  const w = new Where().add('e.instance_id = ?', instanceId).add('e.kind = ?', kind).add('e.at >= ?', f.from).add('e.at < ?', f.to);
  addMailFilters(w, { ...f, status: undefined, opened: undefined });
  const base = `FROM mail_events e JOIN mails m ON m.id = e.mail_row ${w}`;
  const cols = 'm.mail_id, m.msg_id, m.rcpt, m.sender_email, m.subject, m.sent_at, m.custom_msg_id, m.custom_group_code';
  if (group === 'none') return { select: `${cols}, e.url, e.at`, from: base, params: w.params, orderBy: 'e.at DESC, e.id DESC' };
  const agg = 'COUNT(*) AS n, MIN(e.at) AS first_at, MAX(e.at) AS last_at';
  if (group === 'mail_id') {
    return { select: `${cols}, ${agg}`, from: `${base} GROUP BY m.id`, params: w.params, orderBy: 'last_at DESC, m.id DESC', withTotal: false };
  }
  const select = `${cols}, ${agg}, COUNT(DISTINCT m.id) AS recipients, (SELECT COUNT(*) FROM mails x WHERE x.message_id = m.message_id) AS rcpt_count`;
  return { select, from: `${base} GROUP BY m.message_id`, params: w.params, orderBy: 'last_at DESC, m.message_id DESC', withTotal: false };
}

export function listEngagement(db: Db, instanceId: number, kind: EngagementKind, f: MailFilter, group: EngagementGroup, p: PageRequest): Page<Item> {
  const page = listPage<EngagementRow>(db, engagementQuery(instanceId, kind, f, group), p);
  return { ...page, items: page.items.map(presentEngagement(kind, group)) };
}
