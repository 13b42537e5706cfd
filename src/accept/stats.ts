/**
 * GET /v1/stats/overview: the instance's mails received in a window (the mail list's window:
 * local dates in a zone, 3 months by default), counted by status, with their engagement and the
 * rates derived from them. Two index-only reads: mails_by_status for the counts, the partial
 * mails_engaged for the engagement sums, so the cost follows the window, not the table.
 */
import type { Db } from '../store/db';
import type { MailFilter } from '../store/mails';

export const statusNames = ['received', 'queued', 'sent', 'dropped', 'deferred', 'bounced', 'onhold'] as const;
export type StatusName = (typeof statusNames)[number];

export interface Overview {
  total: number;
  /** Mails of test_mode sends, also counted in their status (spec: "counted as `test` in reports"). */
  test: number;
  status: Record<StatusName, number>;
  opens: number; clicks: number; unique_opened: number; unique_clicked: number;
  rates: { delivery_rate: number | null; bounce_rate: number | null; open_rate: number | null; click_rate: number | null; click_to_open_rate: number | null };
}

/** part / whole in 0–1 (4 decimals), null when there is nothing to divide by. */
function rate(part: number, whole: number): number | null {
  if (whole === 0) return null;
  return Math.round(Math.min(1, part / whole) * 10_000) / 10_000;
}

export function statsOverview(db: Db, instanceId: number, f: Pick<MailFilter, 'from' | 'to'>): Overview {
  // status IN (…) lets SQLite probe mails_by_status (instance_id, status, received_at) per status.
  const counts = db.prepare(
    `SELECT status, COUNT(*) AS n FROM mails WHERE instance_id = ? AND status IN (1, 2, 3, 4, 5, 6, 7)
       AND received_at >= ? AND received_at < ? GROUP BY status`,
  ).all(instanceId, f.from, f.to) as { status: number; n: number }[];
  const status = Object.fromEntries(statusNames.map((s) => [s, 0])) as Record<StatusName, number>;
  for (const c of counts) status[statusNames[c.status - 1]] = c.n;
  // The WHERE repeats the predicate of the partial index mails_engaged so the planner may use it.
  const e = db.prepare(
    `SELECT COALESCE(SUM(opens), 0) AS opens, COALESCE(SUM(clicks), 0) AS clicks,
            COALESCE(SUM(opens > 0), 0) AS opened, COALESCE(SUM(clicks > 0), 0) AS clicked
       FROM mails WHERE instance_id = ? AND received_at >= ? AND received_at < ? AND (opens > 0 OR clicks > 0)`,
  ).get(instanceId, f.from, f.to) as { opens: number; clicks: number; opened: number; clicked: number };
  const test = (db.prepare(
    `SELECT COUNT(*) AS n FROM mails WHERE message_id IN (
       SELECT id FROM messages WHERE instance_id = ? AND received_at >= ? AND received_at < ? AND test_mode = 1)`,
  ).get(instanceId, f.from, f.to) as { n: number }).n;
  const total = counts.reduce((sum, c) => sum + c.n, 0);
  return {
    total, test, status, opens: e.opens, clicks: e.clicks, unique_opened: e.opened, unique_clicked: e.clicked,
    rates: {
      delivery_rate: rate(status.sent, status.sent + status.bounced + status.dropped),
      bounce_rate: rate(status.bounced, status.sent + status.bounced),
      open_rate: rate(e.opened, status.sent),
      click_rate: rate(e.clicked, status.sent),
      click_to_open_rate: rate(e.clicked, e.opened),
    },
  };
}
