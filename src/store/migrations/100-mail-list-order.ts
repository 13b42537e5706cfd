/**
 * Indexes of the mail lists at millions of rows (bench/lists.ts, one instance, a million mails):
 * - mails_by_msg gains received_at, like every other equality index of the lists, so a list
 *   filtered by msg_id reads its few rows already in list order (mail-filter.ts mailListIndex)
 *   instead of walking the whole window by reception: 410 -> 3 ms for 2 rows. Every other use
 *   asks for a leading (instance_id, msg_id), still served.
 * - mails_by_received carries the list's whole order (id) and the subject, so a partial subject
 *   filter, which no index can seek, tests the subject in the index instead of reading every
 *   row of the window from the table: 300 -> 80 ms for a subject no mail has. Same number of
 *   index entries per accepted mail as before; each is longer by the subject.
 */
export const version = 100;
export const name = 'mail-list-order';
export const sql = `
DROP INDEX mails_by_msg;
CREATE INDEX mails_by_msg ON mails (instance_id, msg_id, received_at);
DROP INDEX mails_by_received;
CREATE INDEX mails_by_received ON mails (instance_id, received_at, id, subject);
`;
