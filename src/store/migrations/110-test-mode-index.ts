/**
 * Test-mode sends are "counted as `test` in reports" (spec, POST /v1/mails/send): the stats
 * overview counts their mails in its window through this partial index, so the count costs what
 * the test sends cost, not a join over every mail of the window.
 */
export const version = 110;
export const name = 'test-mode-index';
export const sql = `
CREATE INDEX messages_test_mode ON messages (instance_id, received_at) WHERE test_mode = 1;
`;
