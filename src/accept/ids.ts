/**
 * Identifiers of an accepted send (documented in docs/accept.md):
 * - mail_id (one per recipient): the UTC reception date `YYYYMMDD` + 16 base32 characters,
 *   so the retention of an id is decided from the id alone (404 mail_outside_retention).
 * - msg_id (one per send): `YYYYMMDD` + `.` + 20 base32 characters.
 * The first 6 characters after the date are the millisecond of the UTC day, in an order that
 * sorts as the characters do; the rest is random (50 bits in a mail_id, 70 in a msg_id). Ids
 * made one after the other thus sort together, so the unique indexes on them take each batch's
 * new ids on one B-tree page instead of one random page per id: a commit writes every dirty page
 * to the WAL, and random ids made those pages most of a batch's commit.
 */
import { randomToken } from '../lib/tokens';

export const retentionMonths = 3;

function ymd(at: number): string {
  return new Date(at).toISOString().slice(0, 10).replace(/-/g, '');
}

// The base32 characters in ASCII order: digit value i is sortable[i].
const sortable = '234567abcdefghijklmnopqrstuvwxyz';
const dayMs = 86_400_000; // < 32^6

/** The millisecond of the UTC day `at` falls in, as 6 characters that sort in time order. */
function timeOfDay(at: number): string {
  let ms = ((at % dayMs) + dayMs) % dayMs;
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = sortable[ms & 31] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

export const newMailId = (at: number): string => `${ymd(at)}${timeOfDay(at)}${randomToken(10)}`;
export const newMsgId = (at: number): string => `${ymd(at)}.${timeOfDay(at)}${randomToken(14)}`;

/** The reception day encoded in a mail_id (UTC midnight, ms), or null when it is not one of ours. */
export function mailIdDate(mailId: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})[a-z2-7]{16}$/.exec(mailId);
  if (!m) return null;
  const at = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return ymd(at) === `${m[1]}${m[2]}${m[3]}` ? at : null;
}

/**
 * The reception instant encoded in a mail_id (its day and millisecond of the day), or null when
 * the id is not one of ours or predates the time-of-day encoding (those 6 characters were random:
 * most decode past the day's end).
 */
export function mailIdTime(mailId: string): number | null {
  const date = mailIdDate(mailId);
  if (date === null) return null;
  let ms = 0;
  for (const c of mailId.slice(8, 14)) ms = ms * 32 + sortable.indexOf(c);
  return ms < dayMs ? date + ms : null;
}

/**
 * Start of the online retention window: the same instant `months` calendar months earlier; when
 * that day does not exist (31 May -> "31 February"), the first instant of the next month (1 March
 * 00:00), so the start never moves back as time goes on. Date's own month arithmetic overflows
 * into the next month keeping the time of day (3 March 12:00), which cut up to three days off.
 */
export function retentionStart(at: number, months = retentionMonths): number {
  const d = new Date(at);
  const target = d.getUTCFullYear() * 12 + d.getUTCMonth() - months;
  const [year, month] = [Math.floor(target / 12), ((target % 12) + 12) % 12];
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  if (d.getUTCDate() > lastDay) return Date.UTC(year, month + 1, 1);
  const start = new Date(at);
  start.setUTCFullYear(year, month, d.getUTCDate());
  return start.getTime();
}
