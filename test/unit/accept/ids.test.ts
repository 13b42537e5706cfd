import t from 'tap';
import { mailIdDate, mailIdTime, newMailId, newMsgId } from '../../../src/accept/ids';

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
