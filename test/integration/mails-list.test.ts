import t from 'tap';
import { sendFixture } from './send-fixture';
import { openSpool } from '../../src/spool/spool';
import { purgeExpired } from '../../src/accept/purge';
import { newMailId, retentionStart } from '../../src/accept/ids';
import { waitFor } from '../helpers/service';

const localDate = (tz: string): string => new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());

t.test('GET /v1/mails filters, /v1/activities/sent and the by-id lookups', async (t) => {
  const f = await sendFixture(t);
  const a = await f.send({ to: [{ email: f.rcpt('ana+tag') }, { email: f.rcpt('bob') }], subject: 'Invoice 100% paid', custom_msg_id: 'order-1', custom_group_code: 'g1' });
  const b = await f.send({ to: [{ email: f.rcpt('bob') }], subject: 'Welcome_aboard', custom_msg_id: 'order-2', custom_group_code: 'g2' });
  const c = await f.send({ to: [{ email: f.rcpt('carla') }], subject: 'Newsletter' });
  for (const r of [a, b, c]) t.equal(r.status, 200);
  const get = async (q: string, path = '/v1/mails') => (await f.s.api('GET', `${path}?${q}`)).body;
  const tos = async (q: string, path?: string) => (await get(q, path)).data.map((m: any) => m.to).sort();

  t.equal((await get('')).data.length, 4, 'the default window holds every recent mail');
  t.same((await get('')).data.map((m: any) => m.msg_id)[3], a.body.message_id, 'newest first');
  t.same(await tos(`msg_id=${a.body.message_id}`), [f.rcpt('ana+tag'), f.rcpt('bob')]);
  const one = (await get(`msg_id=${b.body.message_id}`)).data[0];
  t.same(await tos(`mail_id=${one.mail_id}`), [f.rcpt('bob')]);
  t.same(await tos(`recipient=${encodeURIComponent(f.rcpt('bob'))}`), [f.rcpt('bob'), f.rcpt('bob')], 'exact recipient');
  t.same(await tos(`recipient=${encodeURIComponent(f.rcpt('ana+tag'))}`), [f.rcpt('ana+tag')], 'a %2B plus matches');
  t.same(await tos(`recipient=${f.rcpt('ana+tag')}`), [], 'a raw + decodes as a space and matches nothing');
  for (const raw of [`+${f.rcpt('bob')}`, `${f.rcpt('bob')}+`]) {
    t.same(await tos(`recipient=${raw}`), [], `a raw + at an end (${raw}) is a space: no other mailbox matches`);
    t.same(await tos(`recipient=${raw}`, '/v1/activities/sent'), [], 'nor on the activity list');
  }
  t.same(await tos('recipient=bob'), [], 'recipient is exact on /v1/mails');
  t.same(await tos('recipient=bob&recipient_operator=starts_with', '/v1/activities/sent'), [f.rcpt('bob'), f.rcpt('bob')], 'starts_with on activities');
  t.same(await tos('recipient_operator=starts_with', '/v1/activities/sent'), (await tos('')), 'the operator is ignored without recipient');
  t.same(await tos('recipient_operator=contains', '/v1/activities/sent'), (await tos('')), 'whatever it says (spec: "ignored without recipient")');
  t.same(await tos('custom_msg_id=order-2'), [f.rcpt('bob')]);
  t.same(await tos('custom_group_code=g1'), [f.rcpt('ana+tag'), f.rcpt('bob')]);
  t.same(await tos('subject=100%25'), [f.rcpt('ana+tag'), f.rcpt('bob')], '% is literal');
  t.same(await tos('subject=e_a'), [f.rcpt('bob')], '_ is literal');
  t.same(await tos('subject=NEWS'), [f.rcpt('carla')], 'partial, case-insensitive');
  const senderId = (await f.s.api('GET', '/v1/senders')).body.data[0].id;
  t.equal((await get(`sender_id=${senderId}`)).data.length, 4);
  t.equal((await get(`sender_id=${senderId + 1000}`)).data.length, 0);
  t.equal((await get('opened=opened')).data.length, 0, 'no opens yet');
  t.equal((await get('opened=all')).data.length, 4);
  await waitFor(async () => (await get('status=3')).data.length === 4, { what: 'the sandbox to capture every mail' });
  t.equal((await get('opened=unopened')).data.length, 4, 'delivered without opens');
  t.equal((await get('status=2')).data.length, 0);

  const paged = await get('page_size=3');
  t.same([paged.data.length, paged.pagination.has_more, paged.pagination.total_items, paged.pagination.total_pages], [3, true, 4, 2]);
  const second = await get('page_size=3&page=2');
  t.same([second.data.length, second.pagination.has_more], [1, false]);
  const costly = await get('subject=e&page_size=1');
  t.equal(costly.pagination.total_items, null, 'no count for a partial subject over the window');
  t.equal(costly.pagination.has_more, true, 'has_more is still right');

  const kiri = localDate('Pacific/Kiritimati');
  t.equal((await get(`start_date=${kiri}&end_date=${kiri}&tz=Pacific/Kiritimati`)).data.length, 4, 'local dates in tz');
  t.equal((await get(`start_date=${kiri}&end_date=${kiri}&tz=Pacific/Pago_Pago`)).data.length, 0, 'the same date in another zone is another day');
  const utc = localDate('UTC');
  t.equal((await get(`start_date=${utc}&end_date=${utc}&tz=Mars/Olympus`)).data.length, 4, 'an invalid zone is ignored (instance zone, UTC)');
  t.equal((await get('end_date=2020-01-01')).data.length, 0);
  for (const bad of ['start_date=2026-13-01', 'end_date=yesterday', 'start_date=2026-02-30', 'status=x']) {
    const r = await f.s.api('GET', `/v1/mails?${bad}`);
    t.equal(r.status, 400, bad);
    t.equal(r.body.code, 'malformed_request', bad);
  }
  for (const [bad, pointer] of [['status=8', '/status'], ['opened=maybe', '/opened'], ['page_size=101', '/page_size']]) {
    const r = await f.s.api('GET', `/v1/mails?${bad}`);
    t.same([r.status, r.body.code, r.body.errors?.[0]?.pointer], [422, 'validation_error', pointer], `${bad}: read, but outside the schema`);
  }

  const detail = await f.s.api('GET', `/v1/mails/${one.mail_id}`);
  t.equal(detail.body.mail_id, one.mail_id);
  const old = await f.s.api('GET', '/v1/mails/20200101abcdefghijklmnop');
  t.equal(old.status, 404);
  t.equal(old.body.code, 'mail_outside_retention', 'decided from the date in the id');
  const unknown = await f.s.api('GET', `/v1/mails/${localDate('UTC').replace(/-/g, '')}abcdefghijklmnop`);
  t.equal(unknown.body.code, 'mail_not_found');
  t.equal((await f.s.api('GET', '/v1/mails/whatever')).body.code, 'mail_not_found');
  t.equal((await f.s.api('GET', '/v1/mails/whatever/logs')).body.code, 'mail_not_found');

  const logs = (await f.s.api('GET', `/v1/mails/${one.mail_id}/logs`)).body.data;
  t.ok(logs.length > 0);
  for (const l of logs) t.match(l, { msg_id: b.body.message_id, mail_id: one.mail_id, event: String }, 'each log entry names its send (spec, Identifiers)');

  const other = await f.s.tenant();
  t.equal((await f.s.api('GET', `/v1/mails/${one.mail_id}`, { key: other.key, slug: other.slug })).body.code, 'mail_not_found', 'another tenant does not see it');
  t.equal((await f.s.api('GET', '/v1/mails', { key: other.key, slug: other.slug })).body.data.length, 0);
});

t.test('text filters fold every letter, exact recipients are compared in canonical form, dates span the calendar', async (t) => {
  const f = await sendFixture(t);
  const slugDomain = f.rcpt('x').split('@')[1];
  const sent = await f.send({ to: [{ email: `Ana@${slugDomain.toUpperCase()}` }], subject: 'Hola Ñandú' });
  t.equal(sent.status, 200);
  const get = async (q: string) => (await f.s.api('GET', `/v1/mails?${q}`)).body;
  const subjects = async (q: string) => (await get(q)).data.map((m: any) => m.subject);
  for (const q of ['ñandú', 'ÑANDÚ', 'hola ñ', 'HOLA']) t.same(await subjects(`subject=${encodeURIComponent(q)}`), ['Hola Ñandú'], `partial subject ${q}`);
  t.same(await subjects(`subject=${encodeURIComponent('nandu')}`), [], 'case-insensitive, not accent-insensitive');
  const stored = `Ana@${slugDomain}`;
  t.same((await get('')).data.map((m: any) => m.to), [stored], 'the domain is stored lowercase');
  t.same((await get(`recipient=${encodeURIComponent(`Ana@${slugDomain.toUpperCase()}`)}`)).data.map((m: any) => m.to), [stored], 'an exact recipient as it was sent');
  t.same((await get(`recipient=${encodeURIComponent(`ana@${slugDomain}`)}`)).data.map((m: any) => m.to), [stored], 'an exact recipient in any case: one mailbox');
  t.same((await get(`recipient=${encodeURIComponent(`ana@${slugDomain}x`)}`)).data, [], 'still the complete address');

  t.equal((await f.s.api('GET', '/v1/mail-templates?name=%C3%B1u')).status, 200);
  for (const q of ['end_date=9999-12-31', 'start_date=0001-01-01', 'start_date=0099-12-31&end_date=9999-12-31']) {
    const r = await f.s.api('GET', `/v1/mails?${q}`);
    t.equal(r.status, 200, `${q} is a date`);
  }
  t.equal((await get('end_date=9999-12-31')).data.length, 1);
  t.equal((await get('start_date=0001-01-01')).data.length, 1);
  t.equal((await f.s.api('GET', '/v1/mails?start_date=0000-01-01')).status, 400, 'there is no year 0');
  const huge = await f.s.api('GET', '/v1/mails?page=99999999999999999999');
  t.equal(huge.status, 400);
  t.equal(huge.body.code, 'malformed_request');
});

t.test('the retention purge removes mails and spool files past 3 months', async (t) => {
  const f = await sendFixture(t);
  const r = await f.send();
  t.equal(r.status, 200);
  const spool = openSpool(f.s.dataDir);
  t.equal(await purgeExpired(f.s.svc.db, spool), 0, 'nothing is old yet');
  t.equal((await f.s.api('GET', `/v1/mails?msg_id=${r.body.message_id}`)).body.data.length, 1);
  const in100Days = Date.now() + 100 * 86_400_000;
  t.equal(await purgeExpired(f.s.svc.db, spool, in100Days), 1);
  t.equal((await f.s.api('GET', `/v1/mails?msg_id=${r.body.message_id}&start_date=2020-01-01`)).body.data.length, 0, 'the rows are gone');
  t.same(await spool.list(), [], 'the file is gone');

  // The id carries its reception instant: retention is decided at the very instant the list's
  // default window starts, before the purge ran as after it.
  const codeOf = async (path: string): Promise<[number, string]> => {
    const r = await f.s.api('GET', path);
    return [r.status, r.body.code];
  };
  const edge = await f.send();
  const cutoff = retentionStart(Date.now());
  const row = f.s.svc.db.prepare('SELECT m.id, m.message_id FROM mails m JOIN messages g ON g.id = m.message_id WHERE g.msg_id = ?').get(edge.body.message_id) as { id: number; message_id: number };
  const move = (at: number): string => {
    const id = newMailId(at);
    f.s.svc.db.prepare('UPDATE mails SET mail_id = ?, received_at = ? WHERE id = ?').run(id, at, row.id);
    f.s.svc.db.prepare('UPDATE messages SET received_at = ? WHERE id = ?').run(at, row.message_id);
    return id;
  };
  const inside = move(cutoff + 600_000);
  t.equal((await f.s.api('GET', `/v1/mails/${inside}`)).status, 200, 'received ten minutes after the cutoff: there');
  const outside = move(cutoff - 600_000);
  t.same(await codeOf(`/v1/mails/${outside}`), [404, 'mail_outside_retention'], 'received before the cutoff: outside, though not purged yet');
  t.ok(f.s.svc.db.prepare('SELECT 1 FROM mails WHERE mail_id = ?').get(outside), 'the row is still there');
  for (const list of ['/v1/mails?start_date=2020-01-01', '/v1/activities/sent?start_date=2020-01-01', '/v1/mails']) {
    const listed = (await f.s.api('GET', list)).body.data.some((m: { mail_id: string }) => m.mail_id === outside);
    t.equal(listed, false, `${list}: not listed either, though the purge has not run`);
  }
  t.equal(await purgeExpired(f.s.svc.db, spool), 1);
  t.same(await codeOf(`/v1/mails/${outside}`), [404, 'mail_outside_retention'], 'and after the purge');
  t.same(await codeOf(`/v1/mails/${newMailId(cutoff + 600_000)}`), [404, 'mail_not_found'], 'an unknown id inside the window was never there');
});
