/**
 * Opens the SQLite store under the data dir: WAL, synchronous=FULL (a commit is on disk before
 * we acknowledge), foreign keys, busy timeout (the CLI may write while the server runs), then
 * applies pending migrations. Only store/ imports better-sqlite3.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { migrations } from './migrations';
import { makeDir } from '../lib/paths';

export type Db = Database.Database;

export function openDb(dataDir: string): Db {
  makeDir(dataDir, 0o700);
  narrowToOwner(dataDir, 0o700);
  const file = path.join(dataDir, 'estafeta.db');
  ownerOnly(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 10000');
  // A long reader (an export a client reads slowly) keeps the WAL from restarting, so it grows
  // under load; once a checkpoint can reset it, it is cut back to this size instead of staying
  // at its peak until a clean stop.
  db.pragma('journal_size_limit = 67108864');
  registerFunctions(db);
  cacheStatements(db);
  immediateTransactions(db);
  const close = db.close.bind(db);
  db.close = () => {
    close();
    releaseWal(db);
    return db;
  };
  migrate(db);
  return db;
}

/** A data dir another server holds (see lockDataDir). */
export class DataDirLocked extends Error {
  readonly code = 'EDATADIRLOCKED';
}

/**
 * One server per data dir, as Postfix's master refuses a second instance: two would deliver the
 * same queue twice and write the same spool segments. The lock is an exclusive SQLite lock on
 * `server.lock` (a POSIX lock: the kernel drops it when the holder dies, SIGKILL included), held
 * until release(). A start waits up to `waitMs` for a holder that is still dying. The CLI takes no
 * lock: it is meant to run beside the server.
 */
export function lockDataDir(dataDir: string, waitMs = 5000): { release(): void } {
  makeDir(dataDir, 0o700);
  const file = path.join(dataDir, 'server.lock');
  if (!fs.existsSync(file)) fs.closeSync(fs.openSync(file, 'a', 0o600));
  const lock = new Database(file, { timeout: waitMs });
  try {
    // EXCLUSIVE locking mode keeps the lock the first write takes until the connection closes.
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER); DELETE FROM holder;');
    lock.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
    lock.exec('COMMIT');
  } catch (err) {
    lock.close();
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY') throw new DataDirLocked(`another server runs on the data dir ${dataDir} (one server per data dir; the CLI may run beside it)`);
    throw err;
  }
  return { release: () => lock.close() };
}

/**
 * The store holds every domain's DKIM private key: its files are the owner's alone (0600), like
 * the TLS key and tracking.key. The database file is created so before SQLite opens it, since
 * SQLite gives its -wal and -shm files the database file's mode; files of an older data dir are
 * narrowed in place.
 */
function ownerOnly(file: string): void {
  if (!fs.existsSync(file)) fs.closeSync(fs.openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) narrowToOwner(f, 0o600);
}

/**
 * Takes group and other access off a path the process owns (only the owner may; another user
 * the operator let in keeps working). The data dir too: ./spool comes with the clone (its
 * .gitkeep), so it exists at 0755 before the service ever makes it 0700.
 */
function narrowToOwner(f: string, mode: 0o600 | 0o700): void {
  try {
    const st = fs.statSync(f);
    if ((st.mode & 0o077) !== 0 && st.uid === process.geteuid?.()) fs.chmodSync(f, mode);
  } catch (err) {
    if (!['ENOENT', 'EPERM', 'EROFS'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
  }
}

/** SQL functions the store's queries use, on every connection that runs them (see containsText). */
export function registerFunctions(db: Db): void {
  db.function('fold', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? text.toLowerCase() : text));
}

/**
 * Every `db.prepare(sql)` returns one compiled statement per SQL text: compiling on each call
 * was the largest single cost of a send (profile of `npm run bench`). The store's queries are
 * constant strings, so the cache is bounded by the code. A cached reader comes back with
 * pluck() off, the only mode the code toggles, so a caller never inherits another's mode.
 */
function cacheStatements(db: Db): void {
  const compile = db.prepare.bind(db);
  const cache = new Map<string, Database.Statement>();
  db.prepare = ((text: string) => {
    let stmt = cache.get(text);
    if (!stmt) {
      stmt = compile(text);
      if (cache.size < 2000) cache.set(text, stmt); // a dynamic SQL text must not grow it forever
    } else if (stmt.reader) {
      stmt.pluck(false);
    }
    return stmt;
  }) as Db['prepare'];
}

/**
 * Every `db.transaction(fn)` begins IMMEDIATE: it takes the write lock first, waiting for it
 * under busy_timeout. A DEFERRED one reads, then upgrades to write; when another process (the
 * CLI, while the server runs) committed in between, that upgrade fails at once with
 * SQLITE_BUSY, which no timeout retries: a group-commit batch that read the send quota failed
 * whole (503) while `domain add` ran. Every transaction here writes, so none loses by this.
 */
function immediateTransactions(db: Db): void {
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (...args: never[]) => unknown) => {
    // Each variant carries the others (.deferred, .exclusive...), as better-sqlite3 builds them.
    return transaction(fn).immediate;
  }) as Db['transaction'];
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
  for (const m of migrations) apply(m);
}

/**
 * Runs `fn` (a transaction) with synchronous=NORMAL: its commit writes the WAL without the
 * fsync that FULL would do on the event loop's thread. The caller makes the commit durable with
 * `syncWal` (off the event loop) before acting on it (the accept path answers only then), or
 * does not need it durable at all (a delivery claim is a lease a crash releases anyway).
 */
export function withoutSync<T>(db: Db, fn: () => T): T {
  // Through db.prepare's cache: db.pragma() compiles its statement on every call (twice a batch).
  db.prepare('PRAGMA synchronous = NORMAL').run();
  try {
    return fn();
  } finally {
    db.prepare('PRAGMA synchronous = FULL').run();
  }
}

/**
 * Makes every transaction committed so far durable: one fdatasync of the WAL file on the thread
 * pool. SQLite recovers the WAL frames that reached the disk (checksummed), so after this the
 * commit survives a power loss exactly as with synchronous=FULL.
 * The WAL is opened once per connection and kept (opening and closing it per batch cost the
 * event loop more than the sync itself): while this connection is open SQLite keeps the same
 * WAL file (it is deleted only by the last connection's close, and a checkpoint rewrites it in
 * place), so the descriptor always names the file SQLite writes. It is closed with the store.
 */
export async function syncWal(db: Db): Promise<void> {
  const wal = walOf(db);
  wal.busy++;
  try {
    await new Promise<void>((resolve, reject) => fs.fdatasync(wal.fd, (err) => (err ? reject(err) : resolve())));
  } finally {
    wal.busy--;
    if (wal.busy === 0 && !db.open) releaseWal(db);
  }
}

interface WalFile { fd: number; busy: number }
const walFiles = new WeakMap<Db, WalFile>();

function walOf(db: Db): WalFile {
  let wal = walFiles.get(db);
  if (!wal) walFiles.set(db, (wal = { fd: fs.openSync(`${db.name}-wal`, 'r'), busy: 0 }));
  return wal;
}

/** Closes the kept WAL descriptor once no sync is using it (called when the store closes). */
function releaseWal(db: Db): void {
  const wal = walFiles.get(db);
  if (!wal || wal.busy > 0) return;
  walFiles.delete(db);
  fs.closeSync(wal.fd);
}

/** Escapes a user text for `LIKE ? ESCAPE '\'`: `%` and `_` match literally (spec, Text filters). */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * A partial text filter (spec, Text filters: anywhere in the field, case-insensitive) as a WHERE
 * clause and its parameter. SQLite's LIKE folds ASCII letters only, so a needle with other
 * letters ("ñandú") is compared with the column lowercased by JavaScript (`fold`); an ASCII
 * needle keeps plain LIKE, which no per-row function call slows.
 */
export function containsText(column: string, text: string): [string, string] {
  const pattern = likeContains(text);
  if (/^[\x00-\x7f]*$/.test(text)) return [`${column} LIKE ? ESCAPE '\\'`, pattern];
  return [`fold(${column}) LIKE ? ESCAPE '\\'`, pattern.toLowerCase()];
}
export function likePrefix(text: string): string {
  return `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
