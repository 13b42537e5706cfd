/**
 * Long reads (the activity exports) on a second, read-only connection to the store: a statement
 * iterator holds its connection busy until it ends, and an export is paced by the client, so it
 * must not hold the connection the doors and the pipeline write with. In WAL mode the reader
 * sees one snapshot (its read transaction) while writers go on. Never writes.
 */
import Database from 'better-sqlite3';
import { registerFunctions, type Db } from './db';
import type { ListQuery } from './page';

export interface Reader {
  /** Whether the query has more than `n` rows (one probe, within the snapshot). */
  hasMoreThan(q: ListQuery, n: number): boolean;
  /** The first `limit` rows of the query, in its order, one at a time. */
  iterate<Row>(q: ListQuery, limit: number): IterableIterator<Row>;
  close(): void;
}

export function openReader(db: Db): Reader {
  const conn = new Database(db.name, { readonly: true, fileMustExist: true });
  conn.pragma('busy_timeout = 10000');
  registerFunctions(conn);
  conn.exec('BEGIN'); // the snapshot starts at the first read and lasts until close
  let open = true;
  return {
    hasMoreThan(q, n) {
      return conn.prepare(`SELECT 1 ${q.from} LIMIT 1 OFFSET ?`).get(...q.params, n) !== undefined;
    },
    iterate<Row>(q: ListQuery, limit: number) {
      return conn.prepare(`SELECT ${q.select} ${q.from} ORDER BY ${q.orderBy} LIMIT ?`).iterate(...q.params, limit) as IterableIterator<Row>;
    },
    close() {
      if (!open) return;
      open = false;
      conn.close(); // also ends the read transaction
    },
  };
}
