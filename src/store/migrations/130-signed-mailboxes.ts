/**
 * From this migration on, the per-mail mailboxes (VERP return path, List-Unsubscribe mailto) are
 * signed (tracking/links.ts). Its applied_at in schema_migrations is the cut-over: a mail received
 * before it went out with unsigned mailboxes, which the inbound MX still takes for that mail.
 */
export const version = 130;
export const name = 'signed-mailboxes';
export const sql = `SELECT 1;`;
