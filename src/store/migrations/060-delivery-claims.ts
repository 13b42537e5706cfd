/**
 * Delivery claims: a mail handed to an attempt carries claimed_at until its outcome is written.
 * After a crash, start() finds the claims left behind and makes those mails due at once
 * (at-least-once delivery), instead of waiting for a lease to expire.
 */
export const version = 60;
export const name = 'delivery-claims';
export const sql = `
ALTER TABLE mails ADD COLUMN claimed_at INTEGER;
CREATE INDEX mails_claimed ON mails (claimed_at) WHERE claimed_at IS NOT NULL;
`;
