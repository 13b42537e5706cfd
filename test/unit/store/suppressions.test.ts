import t from 'tap';
import { tempDb } from '../../helpers/temp-db';
import { insertInstance } from '../../../src/store/instances';
import { addSuppression, findOnList, findSuppression } from '../../../src/store/suppressions';

t.test('an address is found in any case, its first record first, and the lookup sorts nothing', async (t) => {
  const db = tempDb(t, 'estafeta-suppr-');
  const a = insertInstance(db, { slug: 'a', name: 'a', timezone: 'UTC', at: 0 });
  const b = insertInstance(db, { slug: 'b', name: 'b', timezone: 'UTC', at: 0 });
  const add = (instanceId: number, list: 'restrictions' | 'unsubscribes' | 'complaints', recipient: string) =>
    addSuppression(db, instanceId, { list, recipient, reason: null, source: 'test', at: 1 });
  add(a, 'unsubscribes', 'Ana@Example.test');
  add(a, 'restrictions', 'ana@example.test');
  add(b, 'complaints', 'ANA@EXAMPLE.TEST');

  t.equal(findSuppression(db, a, 'ANA@example.TEST')?.list, 'unsubscribes', 'the first record, whatever the case');
  t.equal(findSuppression(db, b, 'ana@example.test')?.list, 'complaints', 'per instance');
  t.equal(findSuppression(db, a, 'bob@example.test'), undefined);
  t.equal(findOnList(db, a, 'restrictions', 'ANA@EXAMPLE.TEST')?.recipient, 'ana@example.test', 'per list');
  add(a, 'restrictions', 'ANA@example.test');
  t.equal(db.prepare('SELECT COUNT(*) FROM suppressions WHERE instance_id = ?').pluck().get(a), 2, 'adding again in another case keeps one record per list');

  // Once per recipient of every send: the index must hand back the first record, not a sort.
  const plan = db.prepare('EXPLAIN QUERY PLAN SELECT * FROM suppressions WHERE instance_id = ? AND recipient = ? COLLATE NOCASE ORDER BY id LIMIT 1')
    .all(a, 'x') as { detail: string }[];
  t.match(plan.map((p) => p.detail).join('\n'), /USING INDEX suppressions_by_recipient_first/);
  t.notMatch(plan.map((p) => p.detail).join('\n'), /TEMP B-TREE/);
});
