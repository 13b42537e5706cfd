/**
 * Reading back what accept stored: the Mail object of the spec, the list filters of
 * GET /v1/mails and /v1/activities/sent (local dates in a time zone, the 3-month default
 * window) and the by-id lookup with its retention rule.
 */
import type { Db } from '../store/db';
import type { InstanceRow } from '../store/instances';
import { findMail, listMails, mailLogs, type MailFilter, type MailLogRow, type MailRow } from '../store/mails';
import type { Page, PageRequest } from '../store/page';
import { ServiceError } from '../errors';
import { iso, now } from '../lib/time';
import { mailIdDate, retentionStart } from './ids';

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

export const presentMailLog = (l: MailLogRow) => ({ at: iso(l.at), event: l.event, status: l.status, detail: l.detail, response: l.response });

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

/** Offset of `tz` from UTC at instant `at`, in ms (positive east of Greenwich). */
function zoneOffset(at: number, tz: string): number {
  const f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(at)) p[part.type] = Number(part.value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(at / 1000) * 1000;
}

/** The instant a local date (YYYY-MM-DD) starts in `tz`; 400 for a date that does not exist. */
export function localDayStart(date: string, tz: string, param: string): number {
  const [y, m, d] = date.split('-').map(Number);
  const utc = Date.UTC(y, m - 1, d);
  if (new Date(utc).toISOString().slice(0, 10) !== date) {
    throw new ServiceError('malformed_request', `${param} is not a valid date (YYYY-MM-DD).`, { errors: [{ pointer: `/${param}`, code: 'date_parsing', message: 'Input should be a valid date' }] });
  }
  const first = utc - zoneOffset(utc, tz);
  return utc - zoneOffset(first, tz);
}

export function mailFilter(q: MailsQuery, instance: InstanceRow, at: number = now()): MailFilter {
  const tz = q.tz && isTimeZone(q.tz) ? q.tz : isTimeZone(instance.timezone) ? instance.timezone : 'UTC';
  const from = q.start_date ? localDayStart(q.start_date, tz, 'start_date') : retentionStart(at);
  // end_date is inclusive: the window ends where the next local day starts.
  let to = Number.MAX_SAFE_INTEGER;
  if (q.end_date) {
    const end = localDayStart(q.end_date, tz, 'end_date');
    const next = new Date(Date.parse(`${q.end_date}T00:00:00Z`) + day).toISOString().slice(0, 10);
    to = Math.max(end + 1, localDayStart(next, tz, 'end_date'));
  }
  return {
    from, to, msgId: q.msg_id, mailId: q.mail_id, senderId: q.sender_id, recipient: q.recipient,
    recipientPrefix: q.recipient !== undefined && q.recipient_operator === 'starts_with',
    customMsgId: q.custom_msg_id, customGroupCode: q.custom_group_code, subject: q.subject, status: q.status,
    opened: q.opened,
  };
}

export function listMailPage(db: Db, instance: InstanceRow, q: MailsQuery, p: PageRequest): Page<MailRow> {
  return listMails(db, instance.id, mailFilter(q, instance), p);
}

/** By id, without the list window; an id whose date is past the online retention is gone. */
export function requireMail(db: Db, instanceId: number, mailId: string, at: number = now()): MailRow {
  const date = mailIdDate(mailId);
  if (date !== null && date + day <= retentionStart(at)) {
    throw new ServiceError('mail_outside_retention', `Mail ${mailId} is older than the 3-month online retention.`);
  }
  const m = date === null ? undefined : findMail(db, instanceId, mailId);
  if (!m) throw new ServiceError('mail_not_found', `Mail ${mailId} does not exist.`);
  return m;
}

export function mailLogPage(db: Db, instanceId: number, mailId: string, p: PageRequest): Page<MailLogRow> {
  const m = requireMail(db, instanceId, mailId);
  return mailLogs(db, instanceId, m.id, p);
}

/** The zone a query's local dates are read in: its valid `tz`, else the instance zone, else UTC (as mailFilter). */
export function queryZone(q: Pick<MailsQuery, 'tz'>, instance: InstanceRow): string {
  return q.tz && isTimeZone(q.tz) ? q.tz : isTimeZone(instance.timezone) ? instance.timezone : 'UTC';
}
