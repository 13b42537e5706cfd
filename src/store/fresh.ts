/**
 * A read-through cache for the rows every request reads and almost nothing writes (instance,
 * API key, sender, domain): the accept path looked each of them up per send, which cost more
 * than the send's own inserts. An entry is served only while nothing can have changed it:
 * - no other connection committed to the store since it was read (`PRAGMA data_version`,
 *   checked once per synchronous run of code: the CLI's `apikey revoke`, `instance limits`,
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
    // Held here, not fetched through the statement cache: one check per request's run of code.
    const stmt = db.prepare('PRAGMA data_version');
    const versionOf = (): number => (stmt.get() as { data_version: number }).data_version;
    states.set(db, (s = { entries: new Map(), dataVersion: versionOf(), checked: false, versionOf }));
  }
  return s;
}

/** Drops every entry once another connection has committed since the last check. */
function revalidate(s: State): void {
  if (s.checked) return;
  // One check per synchronous run: a commit by another process cannot land in the middle of it,
  // and every run that serves a request starts after the request was read, so a request sent
  // after a commit always sees it. (Checking once per event-loop turn instead was measured at
  // -3% of the loop's time, but a check made in a check-phase callback would then cover the
  // next turn's timers and poll phase: a request read there could pass with a revoked key.)
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
  revalidate(s);
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
