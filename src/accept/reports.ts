/**
 * Reading back what accept stored: the Mail object of the spec, the list filters of
 * GET /v1/mails and /v1/activities/sent (local dates in a time zone, the 3-month default
 * window) and the by-id lookup with its retention rule.
 */
import type { Db } from '../store/db';
import type { InstanceRow } from '../store/instances';
import { findMail, listMails, mailLogs, type MailFilter, type MailLogRow, type MailRow } from '../store/mails';
import { mapPage, type Page, type PageRequest } from '../store/page';
import { ServiceError } from '../errors';
import { iso, now } from '../lib/time';
import { mailIdDate, mailIdTime, retentionStart } from './ids';
import { normalizeEmail } from '../lib/address';

const day = 86_400_000;

export function presentMail(m: MailRow) {
  return {
    mail_id: m.mail_id,
    msg_id: m.msg_id,
    to: m.rcpt,
    subject: m.subject,
    sender: m.sender_email,
    status: m.status,
    opens: m.opens,
    clicks: m.clicks,
    received_at: iso(m.received_at),
    queued_at: iso(m.queued_at),
    schedule_at: iso(m.schedule_at),
    sent_at: iso(m.sent_at),
    delay: m.sent_at === null ? null : Math.max(0, (m.sent_at - m.received_at) / 1000),
    custom_msg_id: m.custom_msg_id,
    custom_group_code: m.custom_group_code,
  };
}

/** One log entry, with the ids of its mail (spec, Identifiers: `msg_id` appears in delivery logs). */
export const presentMailLog = (m: Pick<MailRow, 'msg_id' | 'mail_id'>) => (l: MailLogRow) => ({
  msg_id: m.msg_id, mail_id: m.mail_id, at: iso(l.at), event: l.event, status: l.status, detail: l.detail, response: l.response,
});

export interface MailsQuery {
  start_date?: string; end_date?: string; tz?: string; msg_id?: string; mail_id?: string; sender_id?: number; recipient?: string;
  recipient_operator?: 'eq' | 'starts_with'; custom_msg_id?: string; custom_group_code?: string; subject?: string; status?: number;
  opened?: 'all' | 'opened' | 'unopened';
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The instant of a UTC calendar time; years 0-99 as written (Date.UTC would read them as 1900-1999). */
function utcOf(y: number, m: number, d: number, h = 0, mi = 0, sec = 0): number {
  const t = new Date(0);
  t.setUTCFullYear(y, m - 1, d);
  t.setUTCHours(h, mi, sec, 0);
  return t.getTime();
}

// A formatter per zone: building one costs more than the several readings a day start takes.
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The local calendar time at instant `at` in `tz`. */
function localParts(at: number, tz: string): Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number> {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', era: 'short', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    if (formatters.size < 1000) formatters.set(tz, f); // zones are a bounded set; a client's typos are not
  }
  const p: Record<string, number> = {};
  let bc = false;
  for (const part of f.formatToParts(at)) {
    if (part.type === 'era') bc = part.value === 'BC';
    else p[part.type] = Number(part.value);
  }
  // The proleptic calendar's year 0 is "1 BC": the last hours before 0001-01-01 in a zone west
  // of UTC fall there, and read as year 1 they would put that day a year early.
  if (bc) p.year = 1 - p.year;
  return p as ReturnType<typeof localParts>;
}

/** Offset of `tz` from UTC at instant `at`, in ms (positive east of Greenwich). */
function zoneOffset(at: number, tz: string): number {
  const p = localParts(at, tz);
  return utcOf(p.year, p.month, p.day, p.hour, p.minute, p.second) - Math.floor(at / 1000) * 1000;
}

const lastDay = utcOf(9999, 12, 31);

/** A date's UTC midnight; 400 for one that does not exist in the calendar (years 0001-9999). */
function dateOf(date: string, param: string): number {
  const [y, m, d] = date.split('-').map(Number);
  const utc = utcOf(y, m, d);
  const t = new Date(utc);
  if (!(y >= 1 && t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d)) {
    throw new ServiceError('malformed_request', `${param} is not a valid date (YYYY-MM-DD).`, { errors: [{ pointer: `/${param}`, code: 'date_parsing', message: 'Input should be a valid date' }] });
  }
  return utc;
}

/**
 * The first instant of a local day in `tz`. Two passes of the offset find local midnight; where
 * a clock change skips midnight (America/Santiago in September: 00:00 -> 01:00) the second pass
 * lands in the day before, and the first pass is the day's real start.
 */
function dayStart(utc: number, tz: string): number {
  const first = utc - zoneOffset(utc, tz);
  const second = utc - zoneOffset(first, tz);
  const date = new Date(utc);
  const inDay = (at: number): boolean => {
    const p = localParts(at, tz);
    return p.year === date.getUTCFullYear() && p.month === date.getUTCMonth() + 1 && p.day === date.getUTCDate();
  };
  for (const at of [Math.min(first, second), Math.max(first, second)]) if (inDay(at)) return at;
  return first;
}

/** The instant a local date (YYYY-MM-DD) starts in `tz`; 400 for a date that does not exist. */
export function localDayStart(date: string, tz: string, param: string): number {
  return dayStart(dateOf(date, param), tz);
}

export function mailFilter(q: MailsQuery, instance: InstanceRow, at: number = now()): MailFilter {
  const tz = queryZone(q, instance);
  // A start_date before the online retention window reads from the window's start: what
  // GET /v1/mails/{id} calls mail_outside_retention is no longer listed either, whether or not
  // the daily purge has removed it yet.
  const from = Math.max(q.start_date ? localDayStart(q.start_date, tz, 'start_date') : -Infinity, retentionStart(at));
  // end_date is inclusive: the window ends where the next local day starts (never, after 9999-12-31).
  let to = Number.MAX_SAFE_INTEGER;
  if (q.end_date) {
    const end = dateOf(q.end_date, 'end_date');
    if (end < lastDay) to = Math.max(dayStart(end, tz) + 1, dayStart(end + day, tz));
  }
  const prefix = q.recipient !== undefined && q.recipient_operator === 'starts_with';
  // Recipients are stored in canonical form (lowercase domain, IDN in ASCII): an exact search
  // with the address as it was sent finds them. A prefix is matched by LIKE, which ignores case.
  // The value is the complete address: not trimmed, so a raw '+' at either end (decoded as a
  // space) matches nothing, as the spec's Text filters rule 2 says, instead of another mailbox.
  const exact = q.recipient === undefined || prefix || q.recipient.trim() !== q.recipient ? q.recipient : normalizeEmail(q.recipient);
  const recipient = exact ?? q.recipient;
  return {
    from, to, msgId: q.msg_id, mailId: q.mail_id, senderId: q.sender_id, recipient,
    recipientPrefix: prefix,
    customMsgId: q.custom_msg_id, customGroupCode: q.custom_group_code, subject: q.subject, status: q.status,
    opened: q.opened,
  };
}

export function listMailPage(db: Db, instance: InstanceRow, q: MailsQuery, p: PageRequest): Page<MailRow> {
  return listMails(db, instance.id, mailFilter(q, instance), p);
}

/** By id, without the list window; an id received before the online retention window is gone. */
export function requireMail(db: Db, instanceId: number, mailId: string, at: number = now()): MailRow {
  const cutoff = retentionStart(at);
  const outside = (): ServiceError => new ServiceError('mail_outside_retention', `Mail ${mailId} is older than the 3-month online retention.`);
  const notFound = (): ServiceError => new ServiceError('mail_not_found', `Mail ${mailId} does not exist.`);
  const date = mailIdDate(mailId);
  if (date === null) throw notFound();
  // The id names its reception instant, so retention is decided from the id alone, at the same
  // instant GET /v1/mails's default window starts, whether or not the purge already ran. An id
  // from before the time-of-day encoding gives only its day: the whole day must be past, and a
  // mail gone on the cutoff's own day was purged (the purge cuts at the instant), not never there.
  const received = mailIdTime(mailId);
  if (received !== null ? received < cutoff : date + day <= cutoff) throw outside();
  const m = findMail(db, instanceId, mailId);
  if (m) return m;
  if (received === null && date <= cutoff) throw outside();
  throw notFound();
}

export function mailLogPage(db: Db, instanceId: number, mailId: string, p: PageRequest): Page<ReturnType<ReturnType<typeof presentMailLog>>> {
  const m = requireMail(db, instanceId, mailId);
  return mapPage(mailLogs(db, instanceId, m.id, p), presentMailLog(m));
}

/** The zone a query's local dates are read in: its valid `tz`, else the instance zone, else UTC (as mailFilter). */
export function queryZone(q: Pick<MailsQuery, 'tz'>, instance: InstanceRow): string {
  return q.tz && isTimeZone(q.tz) ? q.tz : isTimeZone(instance.timezone) ? instance.timezone : 'UTC';
}
