/**
 * An index for GET /v1/stats/overview: the engagement sums (opens, clicks, opened and clicked
 * mails) of a reception window read only the mails that were engaged with, from the index alone.
 * Partial, so the accept path (every mail inserted with opens = clicks = 0) does not maintain it;
 * a tracking hit moves one row in. The status counts use mails_by_status (migration 030), the
 * bounced list mails_by_status plus mail_logs_by_mail, the click list mail_events_by_instance.
 */
export const version = 80;
export const name = 'activity-reports';
export const sql = `
CREATE INDEX mails_engaged ON mails (instance_id, received_at, opens, clicks) WHERE opens > 0 OR clicks > 0;
`;
