// The one precedence function (CONTRACT §6), table-driven: what resolve and the send both apply.
import t from 'tap';
import { decide, sendAllowed, type RuleFact } from '../../../src/consent/precedence';

const rule = (id: number, action: 'allow' | 'deny', at: number, status = 'confirmed'): RuleFact => ({ id, action, created_at: at, event_status: status });

t.test('within one identifier the newest rule sets the state', async (t) => {
  t.same(decide([[]]), { state: 'no_record', rule: null });
  t.same(decide([]), { state: 'no_record', rule: null });
  t.equal(decide([[rule(1, 'allow', 10), rule(2, 'deny', 20)]]).state, 'revoked');
  t.equal(decide([[rule(1, 'deny', 10), rule(2, 'allow', 20)]]).state, 'granted');
  // Order of the input does not matter, only the time.
  t.equal(decide([[rule(2, 'allow', 20), rule(1, 'deny', 10)]]).rule?.id, 2);
});

t.test('rules of the same instant that contradict each other: deny wins, whichever id is later', async (t) => {
  t.same(decide([[rule(1, 'deny', 10), rule(2, 'allow', 10)]]).rule, rule(1, 'deny', 10));
  t.same(decide([[rule(1, 'allow', 10), rule(2, 'deny', 10)]]).rule, rule(2, 'deny', 10));
  t.equal(decide([[rule(1, 'allow', 10), rule(2, 'allow', 10)]]).rule?.id, 2, 'agreeing rules: the later id is reported');
});

t.test('identifiers resolved together: a revocation on any of them wins over a newer grant', async (t) => {
  const d = decide([[rule(1, 'allow', 30)], [rule(2, 'deny', 10)]]);
  t.same([d.state, d.rule?.id], ['revoked', 2]);
  t.same(decide([[rule(1, 'allow', 30)], [rule(2, 'allow', 40)]]).rule?.id, 2, 'the newest grant is reported');
  t.equal(decide([[rule(1, 'allow', 30)], []]).state, 'granted');
});

t.test('a grant counts only from a confirmed event; a revocation counts from any event', async (t) => {
  t.equal(decide([[rule(1, 'allow', 10, 'pending')]]).state, 'no_record');
  t.equal(decide([[rule(1, 'allow', 10, 'expired')]]).state, 'no_record');
  t.equal(decide([[rule(1, 'allow', 10), rule(2, 'allow', 20, 'pending')]]).rule?.id, 1, 'a pending grant does not replace a confirmed one');
  t.equal(decide([[rule(1, 'allow', 10), rule(2, 'deny', 20, 'pending')]]).state, 'revoked');
});

t.test('the send table: opt_in needs a grant, opt_out only needs no revocation', async (t) => {
  const table: Array<['opt_in' | 'opt_out', 'granted' | 'revoked' | 'no_record', boolean]> = [
    ['opt_in', 'granted', true], ['opt_in', 'revoked', false], ['opt_in', 'no_record', false],
    ['opt_out', 'granted', true], ['opt_out', 'revoked', false], ['opt_out', 'no_record', true],
  ];
  for (const [mode, state, sent] of table) t.equal(sendAllowed(mode, state), sent, `${mode} × ${state}`);
});
