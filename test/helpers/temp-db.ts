/** A migrated store in a fresh temp data dir, closed and removed in t.teardown (unit tests of src/store). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb, type Db } from '../../src/store/db';

export function tempDb(t: { teardown(fn: () => unknown): void }, prefix = 'estafeta-db-'): Db {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const db = openDb(dataDir);
  t.teardown(() => {
    db.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return db;
}
