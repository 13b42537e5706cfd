/**
 * Suppression lookups ignore the case of the whole address (a mailbox is not told apart by the
 * case of its local part in practice, and a bounce may quote it differently): an index that
 * serves `recipient = ? COLLATE NOCASE` per instance and list.
 */
export const version = 20;
export const name = 'suppression-nocase';
export const sql = `
CREATE INDEX suppressions_by_recipient_nocase ON suppressions (instance_id, recipient COLLATE NOCASE, list);
`;
