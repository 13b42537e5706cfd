import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb, type Db } from '../../../src/store/db';
import { readFresh, revalidateFresh, touchFresh } from '../../../src/store/fresh';
import type { TapLike } from '../../helpers/service';

/** A store on a fresh data dir, plus a second connection to it (what the CLI is). */
function stores(t: TapLike): { db: Db; other: Db } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'estafeta-fresh-'));
  const db = openDb(dataDir);
  const other = openDb(dataDir);
  t.teardown(() => {
    other.close();
    db.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  db.exec('CREATE TABLE IF NOT EXISTS probe (k TEXT PRIMARY KEY, v INTEGER)');
  db.prepare("INSERT INTO probe (k, v) VALUES ('a', 1)").run();
  return { db, other };
}

const read = (db: Db, now?: number): number =>
  readFresh(db, 'probe:a', () => (db.prepare("SELECT v FROM probe WHERE k = 'a'").get() as { v: number }).v, now);

/** Lets the synchronous run end: the next read is another run of code (another request). */
const nextRun = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

t.test('a row read twice is loaded once while nothing changed', async (t) => {
  const { db } = stores(t);
  let loads = 0;
  const load = (): { v: number } => ({ v: ++loads });
  // An explicit clock: a stalled machine must not age the entry past its second between reads.
  const at = Date.now();
  t.same(readFresh(db, 'k', load, at), { v: 1 });
  await nextRun();
  t.same(readFresh(db, 'k', load, at + 1), { v: 1 }, 'served from the cache');
  t.equal(loads, 1);
  t.throws(() => { (readFresh(db, 'k', load, at + 2) as { v: number }).v = 9; }, TypeError, 'cached rows are frozen');
});

t.test('a commit by another connection (the CLI) is seen by the next request', async (t) => {
  const { db, other } = stores(t);
  const at = Date.now();
  revalidateFresh(db);
  t.equal(read(db, at), 1);
  other.prepare("UPDATE probe SET v = 2 WHERE k = 'a'").run();
  await nextRun();
  t.equal(read(db, at + 1), 1, 'within a request that began before the commit: may be the cached value');
  revalidateFresh(db); // a new request begins
  t.equal(read(db, at + 2), 2);
});

t.test("this process's own writers empty the cache at once", async (t) => {
  const { db } = stores(t);
  t.equal(read(db), 1);
  db.prepare("UPDATE probe SET v = 3 WHERE k = 'a'").run();
  touchFresh(db);
  t.equal(read(db), 3);
});

t.test('an entry is not served once it is a second old', async (t) => {
  const { db } = stores(t);
  const at = Date.now();
  t.equal(read(db, at), 1);
  db.prepare("UPDATE probe SET v = 4 WHERE k = 'a'").run(); // a writer that does not touch the cache
  t.equal(read(db, at + 999), 1, 'younger than a second: cached');
  t.equal(read(db, at + 1000), 4, 'a second old: read again');
});

t.test('reads inside a transaction bypass the cache (they may see uncommitted rows)', async (t) => {
  const { db } = stores(t);
  t.equal(read(db), 1);
  t.throws(() => db.transaction(() => {
    db.prepare("UPDATE probe SET v = 5 WHERE k = 'a'").run();
    t.equal(read(db), 5, 'the transaction sees its own write');
    throw new Error('roll back');
  })());
  t.equal(read(db), 1, 'the rolled-back value was never cached');
});
