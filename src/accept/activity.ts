/**
 * The mail-level activity lists beyond GET /v1/mails: bounced mails (status 6 with the reason and
 * time of their bounce) and the query of the sent list for its export. Both filter like the mail
 * list and window on reception; newest first. Builds queries; the store runs them (page or export).
 */
import type { Db } from '../store/db';
import type { MailFilter, MailRow } from '../store/mails';
import { mailListQuery } from '../store/mail-filter';
import { listPage, type ListQuery, type Page, type PageRequest } from '../store/page';
import { iso } from '../lib/time';
import { presentMail } from './reports';

const bouncedStatus = 6;

/** GET /v1/activities/sent as a query (its export): the rows of listMails, in its order. */
export function sentQuery(instanceId: number, f: MailFilter): ListQuery {
  return mailListQuery(instanceId, f);
}

export interface BouncedRow extends MailRow { bounced_at: number | null; reason: string | null }

// The mail's last `bounced` log entry: an SMTP 5xx (response = the remote reply), the end of the
// queue age (detail "expired: …", response = the last reply) or a DSN (response = its
// Diagnostic-Code). The reason is the remote's words when they are the bounce's cause, else our
// detail: an expired mail's last reply is a 4xx or a connection error, not why it bounced.
const lastBounce = "FROM mail_logs l WHERE l.mail_row = m.id AND l.event = 'bounced' ORDER BY l.id DESC LIMIT 1";
const bounceReason = "CASE WHEN l.detail LIKE 'expired:%' THEN l.detail ELSE COALESCE(l.response, l.detail) END";

/** Bounced mails (status 6; a `status` filter is overridden), read through mails_by_status unless a rarer filter picks its index. */
export function bouncedQuery(instanceId: number, f: MailFilter): ListQuery {
  const select = `m.*, (SELECT l.at ${lastBounce}) AS bounced_at, (SELECT ${bounceReason} ${lastBounce}) AS reason`;
  return mailListQuery(instanceId, { ...f, status: bouncedStatus }, select);
}

export function listBounced(db: Db, instanceId: number, f: MailFilter, p: PageRequest): Page<BouncedRow> {
  return listPage<BouncedRow>(db, bouncedQuery(instanceId, f), p);
}

/** The Mail object plus `reason` and `bounced_at` (the log entry's time; the final time without one). */
export function presentBounced(r: BouncedRow) {
  return { ...presentMail(r), reason: r.reason, bounced_at: iso(r.bounced_at ?? r.final_at) };
}
