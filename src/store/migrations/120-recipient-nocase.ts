/**
 * The exact `recipient` filter of the mail and activity lists matches the address in any case
 * (as the prefix filter, LIKE, and the suppression lookup already did): `Ana@Example.test` is
 * one mailbox to every provider that matters. The index takes NOCASE so the filter keeps it.
 */
export const version = 120;
export const name = 'recipient-nocase';
export const sql = `
DROP INDEX mails_by_rcpt;
CREATE INDEX mails_by_rcpt ON mails (instance_id, rcpt COLLATE NOCASE, received_at);
`;
