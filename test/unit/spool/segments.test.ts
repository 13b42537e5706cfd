import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSpool, type SpoolOptions } from '../../../src/spool/spool';
import type { TapLike } from '../../helpers/service';

/** A spool on a fresh data dir whose live references are the test's own set. */
function spoolWith(t: TapLike, o: Partial<SpoolOptions> = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'estafeta-spool-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const live = new Set<string>();
  const spool = openSpool(dataDir, { gcIntervalMs: 0, ...o, live: (file) => [...live].some((r) => r === file || r.startsWith(`${file}:`)) });
  return { dataDir, live, spool, files: () => fs.readdirSync(spool.dir).sort() };
}

t.test('a batch is appended to one segment and each reference reads back its own bytes', async (t) => {
  const { spool, files } = spoolWith(t);
  const items = [Buffer.from('first message'), Buffer.from('second, longer message'), Buffer.alloc(70_000, 7)];
  const refs = await spool.append(items, (r) => r);
  t.same(files(), ['seg-000001.spool'], 'one file for the whole batch');
  t.match(refs[1], /^seg-000001\.spool:13:22$/);
  for (const [i, ref] of refs.entries()) t.same(await spool.read(ref), items[i]);
});

t.test('a segment is deleted once no live message references it; the next batch starts a new one', async (t) => {
  const { spool, live, files } = spoolWith(t);
  const refs = await spool.append([Buffer.from('a'), Buffer.from('b')], (r) => r);
  refs.forEach((r) => live.add(r));
  live.delete(refs[0]);
  await spool.remove(refs[0]);
  t.same(files(), ['seg-000001.spool'], 'kept while one reference is live');
  live.delete(refs[1]);
  await spool.remove(refs[1]);
  t.same(files(), [], 'released with its last reference');
  const next = await spool.append([Buffer.from('c')], (r) => r);
  t.match(next[0], /^seg-000002\.spool:0:1$/, 'numbers never go back');
});

t.test('past the size threshold the next batch rotates, and the full segment goes with its references', async (t) => {
  const { spool, live, files } = spoolWith(t, { segmentBytes: 10 });
  const old = await spool.append([Buffer.alloc(12, 1)], (r) => r);
  live.add(old[0]);
  const fresh = await spool.append([Buffer.alloc(3, 2)], (r) => r);
  live.add(fresh[0]);
  t.same(files(), ['seg-000001.spool', 'seg-000002.spool']);
  live.delete(old[0]);
  await spool.remove(old[0]);
  t.same(files(), ['seg-000002.spool']);
  t.same(await spool.read(fresh[0]), Buffer.alloc(3, 2));
});

t.test('reads across more segments than kept descriptors, in any order, return each message; a reclaimed segment reads no more', async (t) => {
  const { spool, live, files } = spoolWith(t, { segmentBytes: 1 });
  const refs: string[] = [];
  // Live from their commit on, as rows are: a rotation reclaims only what nothing references.
  const commit = (r: string[]): string[] => {
    r.forEach((x) => live.add(x));
    return r;
  };
  for (let i = 0; i < 12; i++) refs.push(...(await spool.append([Buffer.from(`message ${i} a`), Buffer.from(`message ${i} b`)], commit)));
  t.equal(files().length, 12, 'one segment per batch');
  const order = [...refs.keys()].sort((a, b) => ((a * 7) % 24) - ((b * 7) % 24));
  const twice = await Promise.all([...order, ...order].map((i) => spool.read(refs[i])));
  t.same(twice.map((b) => b.toString()), [...order, ...order].map((i) => `message ${Math.floor(i / 2)} ${i % 2 ? 'b' : 'a'}`));
  for (const r of refs) live.delete(r);
  await spool.remove(refs[0]);
  t.same(files(), [], 'every segment reclaimed, descriptors or not');
  await t.rejects(spool.read(refs[3]), 'the bytes of a reclaimed segment are gone');
});

t.test('bytes of a batch whose commit failed are garbage: the start-up sweep removes them with temporary and orphan files', async (t) => {
  const { dataDir, spool } = spoolWith(t);
  await t.rejects(spool.append([Buffer.from('never acknowledged')], () => {
    throw new Error('commit failed');
  }), /commit failed/);
  fs.writeFileSync(path.join(spool.dir, '.tmp-x.eml'), 'torn');
  fs.writeFileSync(path.join(spool.dir, 'legacy-orphan.eml'), 'old layout');
  fs.writeFileSync(path.join(spool.dir, 'legacy-live.eml'), 'old layout, still queued');
  // A restart: a new writer on the same directory, whose store knows one live legacy file.
  const restarted = openSpool(dataDir, { live: (file) => file === 'legacy-live.eml' });
  t.same(await restarted.sweep(), { temporary: 1, orphans: 2 });
  t.same(fs.readdirSync(spool.dir), ['legacy-live.eml']);
  t.equal((await restarted.read('legacy-live.eml')).toString(), 'old layout, still queued', 'a legacy reference reads the whole file');
  await restarted.remove('legacy-live.eml');
  t.same(fs.readdirSync(spool.dir), [], 'removing a legacy reference deletes its file');
  const refs = await restarted.append([Buffer.from('z')], (r) => r);
  t.match(refs[0], /^seg-000002\.spool:/, 'a restart never appends to an old segment');
});
