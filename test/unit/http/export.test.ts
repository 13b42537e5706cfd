// The export stream's snapshot lease (src/http/export.ts): a client slower than the lease gets the
// same bytes, from the same snapshot, out of a spill file, and the store's reader is released, so a
// checkpoint can take the WAL back while the client is still reading. Real store, real files.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { tempDb } from '../../helpers/temp-db';
import type { Db } from '../../../src/store/db';
import { openReader } from '../../../src/store/reader';
import { csvLine, exportStream, type ExportFormat } from '../../../src/http/export';

interface Row { n: number; label: string }
const query = { select: 'n, label', from: 'FROM export_rows', params: [], orderBy: 'n' };
const columns = ['n', 'label'];
const ROWS = 5000;

function seeded(t: { teardown(fn: () => unknown): void }): Db {
  const db = tempDb(t);
  db.exec('CREATE TABLE export_rows (n INTEGER PRIMARY KEY, label TEXT)');
  addRows(db, 0, ROWS);
  return db;
}

function addRows(db: Db, from: number, count: number): void {
  const ins = db.prepare('INSERT INTO export_rows (n, label) VALUES (?, ?)');
  db.transaction(() => {
    for (let i = from; i < from + count; i++) ins.run(i, `row "${i}", =${'x'.repeat(40)}`);
  })();
}

const expected = (format: ExportFormat, count: number): string => {
  const rows = Array.from({ length: count }, (_, n) => ({ n, label: `row "${n}", =${'x'.repeat(40)}` }));
  return format === 'csv' ? csvLine(columns) + rows.map((r) => csvLine([r.n, r.label])).join('') : JSON.stringify(rows);
};

function open(db: Db, format: ExportFormat, leaseMs?: number): Readable {
  return exportStream<Row>(openReader(db), { query, present: (r) => ({ n: r.n, label: r.label }), columns, format },
    { spillDir: path.dirname(db.name), leaseMs });
}

/** Frames of the WAL a PASSIVE checkpoint could not copy back (a reader holds an older snapshot). */
function pinnedFrames(db: Db): number {
  const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
  return r.log - r.checkpointed;
}

/** The first chunk only: the snapshot is taken and the client then stops reading. */
async function firstChunk(s: Readable): Promise<Buffer> {
  await new Promise((resolve) => s.once('readable', resolve));
  return s.read(1) as Buffer;
}

async function rest(s: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const spillFiles = (db: Db): string[] => fs.readdirSync(path.dirname(db.name)).filter((f) => f.startsWith('.export-'));

t.test('a client within the lease reads the snapshot straight from the store', async (t) => {
  const db = seeded(t);
  for (const format of ['csv', 'json'] as const) {
    t.equal((await rest(open(db, format))).toString(), expected(format, ROWS), `${format}: every row`);
  }
});

t.test('a client still reading when the lease ends: same bytes, same snapshot, the reader released', async (t) => {
  for (const format of ['csv', 'json'] as const) {
    const db = seeded(t);
    const s = open(db, format, 50);
    const head = await firstChunk(s);
    addRows(db, ROWS, 2000); // written after the snapshot: not in this export
    // The lease ends after 50 ms; the spill then takes a chunk per turn: wait for its end, not a guess.
    for (let i = 0; i < 200 && pinnedFrames(db) > 0; i++) await sleep(25);
    t.equal(pinnedFrames(db), 0, `${format}: the WAL checkpoints while the client has not read on`);
    t.same(spillFiles(db), [], 'the spill file has no name on disk');
    const body = Buffer.concat([head, await rest(s)]).toString();
    t.equal(body, expected(format, ROWS), `${format}: the whole export, from the snapshot it began in`);
  }
});

t.test('without the lease ending, the reader holds the WAL (what the lease is for)', async (t) => {
  const db = seeded(t);
  const s = open(db, 'csv', 60_000); // a lease no stalled machine outlives
  const head = await firstChunk(s);
  addRows(db, ROWS, 2000);
  await sleep(300);
  t.ok(pinnedFrames(db) > 0, 'the new frames cannot be checkpointed while the snapshot is held');
  t.equal(Buffer.concat([head, await rest(s)]).toString(), expected('csv', ROWS));
  t.equal(pinnedFrames(db), 0, 'released at the end');
});

t.test('a client gone during the spill releases everything', async (t) => {
  const db = seeded(t);
  addRows(db, ROWS, 45_000);
  const s = open(db, 'json', 20);
  await firstChunk(s);
  await sleep(25); // the spill has begun and is writing, a chunk per turn
  addRows(db, 50_000, 100);
  s.destroy();
  await new Promise((r) => s.once('close', r));
  await sleep(20);
  t.equal(pinnedFrames(db), 0, 'the reader is closed');
  t.same(spillFiles(db), []);
});
