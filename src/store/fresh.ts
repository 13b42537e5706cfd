/**
 * A read-through cache for the rows every request reads and almost nothing writes (instance,
 * API key, sender, domain): the accept path looked each of them up per send, which cost more
 * than the send's own inserts. An entry is served only while nothing can have changed it:
 * - no other connection committed to the store since it was read (`PRAGMA data_version`,
 *   checked by `revalidateFresh`, which authentication calls as every HTTP request and every
 *   SMTP message begins, after it was read: the CLI's `apikey revoke`, `instance limits`,
 *   `instance disable`, sender and domain changes act on the next request);
 * - no writer of those tables ran in this process (the store's writers call `touchFresh`);
 * - it is younger than one second: the bound for a writer not covered above (CONTRACT §6).
 * Rows handed out are frozen: callers share them and must never mutate them.
 */
import type { Db } from './db';

const maxAgeMs = 1000;
const maxEntries = 10_000;

interface Entry { at: number; value: unknown }
interface State { entries: Map<string, Entry>; dataVersion: number; checked: boolean; versionOf: () => number }

const states = new WeakMap<Db, State>();

function stateOf(db: Db): State {
  let s = states.get(db);
  if (!s) {
    const stmt = db.prepare('PRAGMA data_version');
    const versionOf = (): number => (stmt.get() as { data_version: number }).data_version;
    states.set(db, (s = { entries: new Map(), dataVersion: versionOf(), checked: false, versionOf }));
  }
  return s;
}

/**
 * Drops every entry once another connection has committed since the last check. Called where a
 * request (or an SMTP message) begins, once it was read, so anything committed before it was
 * sent is seen by all of its reads; checking on every read instead cost one statement more per
 * send (its reads span two runs of code), ~20 µs on a busy loop. A commit landing while a request
 * is in flight may or may not be seen by its later reads, as with any concurrent change.
 * (Checking once per event-loop turn was tried and reverted: a check made in a check-phase
 * callback covered the next turn's poll phase, where a request sent after a revoke could pass.)
 */
export function revalidateFresh(db: Db): void {
  const s = stateOf(db);
  if (s.checked) return;
  // Several doors' calls in one synchronous run share the check: no commit lands inside a run.
  s.checked = true;
  queueMicrotask(() => { s.checked = false; });
  const v = s.versionOf();
  if (v !== s.dataVersion) {
    s.dataVersion = v;
    s.entries.clear();
  }
}

/** `load()`'s value for `key` (which must name the tenant when the row is tenant data). */
export function readFresh<T>(db: Db, key: string, load: () => T, now = Date.now()): T {
  const s = stateOf(db);
  // Inside a transaction a row may be this connection's own uncommitted (and revocable) write.
  if (db.inTransaction) return load();
  const hit = s.entries.get(key);
  if (hit && now - hit.at < maxAgeMs) return hit.value as T;
  const value = load();
  if (value !== null && typeof value === 'object') Object.freeze(value);
  if (s.entries.size >= maxEntries) s.entries.clear();
  s.entries.set(key, { at: now, value });
  return value;
}

/** Called by every store writer of a cached table: this process's own changes act at once. */
export function touchFresh(db: Db): void {
  states.get(db)?.entries.clear();
}
