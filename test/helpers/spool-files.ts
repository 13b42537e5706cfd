/**
 * Reads the spool the way delivery does: a message's bytes by its messages.spool_file reference,
 * through the real spool module, whatever the layout (segment `seg-<n>.spool:<offset>:<length>`
 * or a legacy whole file). Tests use it to check what the spool holds instead of guessing paths.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openSpool, parseRef } from '../../src/spool/spool';

/** The reference stored for a message ('' when it kept no bytes); undefined when there is no row. */
export function spoolRefOf(db: { prepare(sql: string): { get(...a: unknown[]): unknown } }, msgId: string): string | undefined {
  const row = db.prepare('SELECT spool_file FROM messages WHERE msg_id = ?').get(msgId) as { spool_file: string } | undefined;
  return row?.spool_file;
}

/** Same, from a data dir whose service runs in another process (read-only, WAL readers coexist). */
export function spoolRefsIn(dataDir: string, sql = 'SELECT msg_id, spool_file FROM messages'): Map<string, string> {
  const db = new Database(path.join(dataDir, 'estafeta.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare(sql).all() as { msg_id: string; spool_file: string }[];
    return new Map(rows.map((r) => [r.msg_id, r.spool_file]));
  } finally {
    db.close();
  }
}

/** The message's bytes, or null when its reference is empty or its file is gone or short. */
export async function spooledBytes(dataDir: string, ref: string | undefined): Promise<Buffer | null> {
  if (!ref) return null;
  try {
    return await openSpool(dataDir).read(ref);
  } catch {
    return null;
  }
}

/** The file holding a reference still exists (its bytes have not been reclaimed). */
export function spoolHolds(dataDir: string, ref: string | undefined): boolean {
  return !!ref && fs.existsSync(path.join(dataDir, 'messages', parseRef(ref).file));
}

/** The names of the files in the spool directory (segments, legacy files, temporary files). */
export function spoolFiles(dataDir: string): string[] {
  const dir = path.join(dataDir, 'messages');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

/** The file names the given references live in. */
export const filesOf = (refs: Iterable<string>): Set<string> => new Set([...refs].filter(Boolean).map((r) => parseRef(r).file));

/** The spooled bytes of an accepted message, read by its reference; throws when it kept none. */
export async function messageBytes(dataDir: string, db: Parameters<typeof spoolRefOf>[0], msgId: string): Promise<Buffer> {
  const ref = spoolRefOf(db, msgId);
  if (!ref) throw new Error(`message ${msgId} has no bytes in the spool (reference ${JSON.stringify(ref)})`);
  return openSpool(dataDir).read(ref);
}
