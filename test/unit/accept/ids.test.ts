import t from 'tap';
import { mailIdDate, mailIdTime, newMailId, newMsgId, retentionStart } from '../../../src/accept/ids';
import { resetAtIso } from '../../../src/accept/policy';

t.test('ids keep their documented format and date', async (t) => {
  const at = Date.UTC(2026, 10, 22, 23, 59, 59, 999);
  const mailId = newMailId(at);
  t.match(mailId, /^20261122[a-z2-7]{16}$/);
  t.match(newMsgId(at), /^20261122\.[a-z2-7]{20}$/);
  t.equal(mailIdDate(mailId), Date.UTC(2026, 10, 22));
  t.match(newMailId(Date.UTC(2026, 10, 22)), /^20261122222222[a-z2-7]{10}$/, 'midnight is the smallest time of day');
});

t.test('ids made later sort after ids made earlier (one index page per batch)', async (t) => {
  const start = Date.UTC(2026, 10, 22, 0, 0, 0, 0);
  // Every millisecond of a day at a prime stride, plus neighbours across each character carry.
  const times = [0, 1, 31, 32, 33, 1023, 1024, 32767, 32768, 86_399_999];
  for (let ms = 0; ms < 86_400_000; ms += 999_983) times.push(ms);
  times.sort((a, b) => a - b);
  for (let i = 1; i < times.length; i++) {
    const [a, b] = [start + times[i - 1], start + times[i]];
    if (a === b) continue;
    t.ok(newMailId(a) < newMailId(b), `mail_id at +${times[i - 1]} ms sorts before +${times[i]} ms`);
    t.ok(newMsgId(a) < newMsgId(b), `msg_id at +${times[i - 1]} ms sorts before +${times[i]} ms`);
  }
  t.not(newMailId(start), newMailId(start), 'ids of the same millisecond still differ');
});

t.test('a mail_id names its reception instant; an id without one names only its day', async (t) => {
  for (const at of [Date.UTC(2026, 10, 22), Date.UTC(2026, 10, 22, 9, 33, 49, 123), Date.UTC(2026, 10, 22, 23, 59, 59, 999)]) {
    t.equal(mailIdTime(newMailId(at)), at, new Date(at).toISOString());
  }
  t.equal(mailIdTime('20261122zzzzzzabcdefghij'), null, 'a time of day past the day (ids made before the encoding)');
  t.equal(mailIdDate('20261122zzzzzzabcdefghij'), Date.UTC(2026, 10, 22));
  t.equal(mailIdTime('20261322222222abcdefghij'), null, 'no such date');
});

t.test('the retention window starts 3 calendar months back, on the same day or that month\'s last', async (t) => {
  const cases: Array<[string, string]> = [
    ['2026-05-31T12:00:00.250Z', '2026-03-01T00:00:00.000Z'], // no 31 February: 1 March 00:00 (Date gave 3 March 12:00)
    ['2026-05-28T23:00:00.000Z', '2026-02-28T23:00:00.000Z'],
    ['2026-05-29T01:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ['2028-05-29T12:00:00.000Z', '2028-02-29T12:00:00.000Z'], // leap year
    ['2026-07-31T00:00:00.000Z', '2026-05-01T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', '2026-10-01T00:00:00.000Z'],
    ['2027-01-15T08:30:00.000Z', '2026-10-15T08:30:00.000Z'], // across a year
    ['2026-03-31T10:00:00.000Z', '2025-12-31T10:00:00.000Z'],
    ['2026-11-22T12:10:00.000Z', '2026-08-22T12:10:00.000Z'],
  ];
  for (const [at, start] of cases) t.equal(new Date(retentionStart(Date.parse(at))).toISOString(), start, at);
  // Never back: a mail outside the window must not come back inside it an hour later.
  let last = -Infinity;
  for (let at = Date.parse('2026-05-27T00:00:00Z'); at < Date.parse('2026-06-03T00:00:00Z'); at += 1_800_000) {
    const start = retentionStart(at);
    t.ok(start >= last, `monotonic at ${new Date(at).toISOString()}`);
    last = start;
  }
});

t.test('reset_at is shown rounded up to the second, never before the cycle renews', async (t) => {
  t.equal(resetAtIso({ start: 0, resetAt: Date.parse('2026-11-23T12:16:12.001Z') }), '2026-11-23T12:16:13Z');
  t.equal(resetAtIso({ start: 0, resetAt: Date.parse('2026-11-23T12:16:12.999Z') }), '2026-11-23T12:16:13Z');
  t.equal(resetAtIso({ start: 0, resetAt: Date.parse('2026-11-23T12:16:12.000Z') }), '2026-11-23T12:16:12Z', 'a whole second stays');
});
