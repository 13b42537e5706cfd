/**
 * Identifiers of an accepted send (documented in docs/accept.md):
 * - mail_id (one per recipient): the UTC reception date `YYYYMMDD` + 16 random base32 characters,
 *   so the retention of an id is decided from the id alone (404 mail_outside_retention).
 * - msg_id (one per send): `YYYYMMDD` + `.` + 20 random base32 characters; it also names the
 *   spool file (`<msg_id>.eml`).
 */
import { randomToken } from '../lib/tokens';

export const retentionMonths = 3;

function ymd(at: number): string {
  return new Date(at).toISOString().slice(0, 10).replace(/-/g, '');
}

export const newMailId = (at: number): string => `${ymd(at)}${randomToken(16)}`;
export const newMsgId = (at: number): string => `${ymd(at)}.${randomToken(20)}`;

/** The reception day encoded in a mail_id (UTC midnight, ms), or null when it is not one of ours. */
export function mailIdDate(mailId: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})[a-z2-7]{16}$/.exec(mailId);
  if (!m) return null;
  const at = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return ymd(at) === `${m[1]}${m[2]}${m[3]}` ? at : null;
}

/** Start of the online retention window: the same instant `months` calendar months earlier. */
export function retentionStart(at: number, months = retentionMonths): number {
  const d = new Date(at);
  d.setUTCMonth(d.getUTCMonth() - months);
  return d.getTime();
}
