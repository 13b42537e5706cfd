import t from 'tap';
import { tempDb } from '../../helpers/temp-db';

t.test('the store connection: WAL, synchronous FULL, a bounded WAL file after checkpoints', async (t) => {
  const db = tempDb(t);
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  t.equal(db.pragma('synchronous', { simple: true }), 2, 'FULL outside the group commit');
  t.equal(db.pragma('journal_size_limit', { simple: true }), 64 * 1024 * 1024, 'a WAL grown by a long reader is cut back to 64 MB');
});

t.test('transactions take the write lock first (BEGIN IMMEDIATE)', async (t) => {
  const db = tempDb(t);
  // An immediate transaction holds the RESERVED lock from its first statement: a second
  // connection cannot begin writing until it ends, even if the first has only read so far.
  const Database = (await import('better-sqlite3')).default;
  const other = new Database(db.name, { timeout: 0 });
  t.teardown(() => other.close());
  db.transaction(() => {
    db.prepare('SELECT 1').get();
    t.throws(() => other.exec('BEGIN IMMEDIATE'), /database is locked/, 'the lock is held after a read only');
  })();
  other.exec('BEGIN IMMEDIATE');
  other.exec('COMMIT');
  t.pass('released at the end');
});
