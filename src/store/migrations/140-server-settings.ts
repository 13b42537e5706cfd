/**
 * The settings a running server was started with that the CLI also acts on (store/settings.ts):
 * written at each start, read by a CLI run that was not given them itself.
 */
export const version = 140;
export const name = 'server-settings';
export const sql = `
CREATE TABLE server_settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
`;
