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

function eventsWhere(instanceId: number, kind: EngagementKind, f: MailFilter): Where {
  const w = new Where().add('e.instance_id = ?', instanceId).add('e.kind = ?', kind).add('e.at >= ?', f.from).add('e.at < ?', f.to);
  return addMailFilters(w, { ...f, status: undefined, opened: undefined });
}

const cols = 'm.mail_id, m.msg_id, m.rcpt, m.sender_email, m.subject, m.sent_at, m.custom_msg_id, m.custom_group_code';
const agg = 'COUNT(*) AS n, MIN(e.at) AS first_at, MAX(e.at) AS last_at';
const groupKey = (group: EngagementGroup): string => (group === 'mail_id' ? 'm.id' : 'm.message_id');
const groupSelect = (group: EngagementGroup): string => (group === 'mail_id'
  ? `${cols}, ${agg}`
  : `${cols}, ${agg}, COUNT(DISTINCT m.id) AS recipients, (SELECT COUNT(*) FROM mails x WHERE x.message_id = m.message_id) AS rcpt_count`);

/** The query of one engagement list (the exports stream it whole); mail_events_by_instance (instance_id, kind, at) serves the window. */
export function engagementQuery(instanceId: number, kind: EngagementKind, f: MailFilter, group: EngagementGroup): ListQuery {
  const w = eventsWhere(instanceId, kind, f);
  const base = `FROM mail_events e JOIN mails m ON m.id = e.mail_row ${w}`;
  if (group === 'none') return { select: `${cols}, e.url, e.at`, from: base, params: w.params, orderBy: 'e.at DESC, e.id DESC' };
  return { select: groupSelect(group), from: `${base} GROUP BY ${groupKey(group)}`, params: w.params, orderBy: `last_at DESC, ${groupKey(group)} DESC`, withTotal: false };
}

/**
 * One page of a grouped list without aggregating the whole window (GROUP BY over every event
 * took 1.6 s at 600,000 opens, bench/lists.ts): the events are walked newest first, so each
 * group appears at its last event, in the list's order, and the walk stops once the page's
 * groups and one more (has_more) are known; only those groups are then aggregated, through the
 * per-mail index of their events. Groups whose last events share a millisecond come in event
 * order.
 */
function groupedPage(db: Db, instanceId: number, kind: EngagementKind, f: MailFilter, group: EngagementGroup, p: PageRequest): Page<EngagementRow> {
  const w = eventsWhere(instanceId, kind, f);
  const key = groupKey(group);
  const offset = (p.page - 1) * p.pageSize;
  const keys: number[] = [];
  const seen = new Set<number>();
  const walk = db.prepare(`SELECT ${key} AS g FROM mail_events e JOIN mails m ON m.id = e.mail_row ${w} ORDER BY e.at DESC, e.id DESC`).pluck();
  for (const g of walk.iterate(...w.params) as IterableIterator<number>) {
    if (seen.has(g)) continue;
    seen.add(g);
    keys.push(g);
    if (keys.length > offset + p.pageSize) break;
  }
  const hasMore = keys.length > offset + p.pageSize;
  const pageKeys = keys.slice(offset, offset + p.pageSize);
  if (!pageKeys.length) return { items: [], page: p.page, pageSize: p.pageSize, hasMore, totalItems: null };
  // The page's groups through their own indexes: a message's mails, then each mail's events.
  const from = group === 'mail_id'
    ? 'FROM mails m JOIN mail_events e INDEXED BY mail_events_by_mail ON e.mail_row = m.id'
    : 'FROM mails m INDEXED BY mails_by_message JOIN mail_events e INDEXED BY mail_events_by_mail ON e.mail_row = m.id';
  const rows = db.prepare(`SELECT ${key} AS g, ${groupSelect(group)} ${from} ${w} AND ${key} IN (${pageKeys.map(() => '?').join(', ')}) GROUP BY ${key}`)
    .all(...w.params, ...pageKeys) as Array<EngagementRow & { g: number }>;
  const byKey = new Map(rows.map((r) => [r.g, r]));
  const items = pageKeys.map((k) => byKey.get(k)).filter((r): r is EngagementRow & { g: number } => r !== undefined);
  return { items, page: p.page, pageSize: p.pageSize, hasMore, totalItems: null };
}

export function listEngagement(db: Db, instanceId: number, kind: EngagementKind, f: MailFilter, group: EngagementGroup, p: PageRequest): Page<Item> {
  const page = group === 'none' ? listPage<EngagementRow>(db, engagementQuery(instanceId, kind, f, group), p) : groupedPage(db, instanceId, kind, f, group, p);
  return { ...page, items: page.items.map(presentEngagement(kind, group)) };
}
