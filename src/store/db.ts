/**
 * Opens the SQLite store under the data dir: WAL, synchronous=FULL (a commit is on disk before
 * we acknowledge), foreign keys, busy timeout (the CLI may write while the server runs), then
 * applies pending migrations. Only store/ imports better-sqlite3.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { migrations } from './migrations';

export type Db = Database.Database;

export function openDb(dataDir: string): Db {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new Database(path.join(dataDir, 'estafeta.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 10000');
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  // BEGIN IMMEDIATE: a CLI and the server starting together must not both apply a migration.
  const apply = db.transaction((m: (typeof migrations)[number]) => {
    const done = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
    if (done) return;
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
  });
  for (const m of migrations) apply.immediate(m);
}

/** Escapes a user text for `LIKE ? ESCAPE '\'`: `%` and `_` match literally (spec, Text filters). */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
export function likePrefix(text: string): string {
  return `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
