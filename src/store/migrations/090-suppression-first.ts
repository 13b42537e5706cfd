/**
 * The suppression index of migration 020 without its `list` column: every lookup of an address
 * asks for its first record (`ORDER BY id LIMIT 1`, with or without a list), and an index on
 * (instance, address) alone keeps an address's entries in id order (the rowid ends every index
 * key), so SQLite reads the first one instead of sorting them in a temporary B-tree: 0.9 -> 0.2 µs
 * per lookup, once per recipient of every send and every delivery attempt. A list filter applies
 * to at most three entries (one per list).
 */
export const version = 90;
export const name = 'suppression-first';
export const sql = `
DROP INDEX suppressions_by_recipient_nocase;
CREATE INDEX suppressions_by_recipient_first ON suppressions (instance_id, recipient COLLATE NOCASE);
`;
