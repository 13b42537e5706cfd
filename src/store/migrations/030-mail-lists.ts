/**
 * Indexes for the mail list filters (GET /v1/mails, /v1/activities/sent) and for the accept
 * path's housekeeping: the retention purge (messages by reception) and the start-up spool sweep
 * (messages still holding recipients).
 */
export const version = 30;
export const name = 'mail-lists';
export const sql = `
CREATE INDEX messages_by_received ON messages (received_at);
CREATE INDEX messages_live ON messages (spool_file) WHERE pending > 0;
CREATE INDEX mails_by_custom_msg ON mails (instance_id, custom_msg_id, received_at) WHERE custom_msg_id IS NOT NULL;
CREATE INDEX mails_by_group ON mails (instance_id, custom_group_code, received_at) WHERE custom_group_code IS NOT NULL;
CREATE INDEX mails_by_sender ON mails (instance_id, sender_id, received_at);
CREATE INDEX mails_by_status ON mails (instance_id, status, received_at);
`;
