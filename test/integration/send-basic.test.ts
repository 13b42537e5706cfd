import t from 'tap';
import { sendFixture } from './send-fixture';

t.test('a send from the sandbox sender is acknowledged, stored in the spool and listed per recipient', async (t) => {
  const f = await sendFixture(t);
  const res = await f.send({
    to: [{ email: f.rcpt('Ana'), name: 'Ana' }, { email: f.rcpt('bob') }],
    cc: [{ email: f.rcpt('carla') }],
    bcc: [{ email: f.rcpt('hidden') }],
    reply_to: { email: f.rcpt('replies') },
    text: 'Hello',
    headers: { 'X-Campaign': 'spring', 'In-Reply-To': '<a@b.test>' },
    attachments: [{ type: 'text/plain', filename: 'a.txt', content: Buffer.from('attached').toString('base64') }],
    category: 'Promoción  Verano!',
    custom_msg_id: 'order-1',
    custom_group_code: 'spring',
  });
  t.equal(res.status, 200, JSON.stringify(res.body));
  const msgId: string = res.body.message_id;
  t.match(msgId, /^\d{8}\.[a-z2-7]{20}$/);

  const list = await f.s.api('GET', `/v1/mails?msg_id=${msgId}`);
  t.equal(list.status, 200);
  t.equal(list.body.data.length, 4, 'one record per recipient (to, cc, bcc)');
  t.same(list.body.data.map((m: any) => m.to).sort(), [`Ana@${f.slug}.sandbox.test`, f.rcpt('bob'), f.rcpt('carla'), f.rcpt('hidden')].sort(), 'addresses stored in canonical form');
  const m = list.body.data[0];
  t.same(Object.keys(m).sort(), ['clicks', 'custom_group_code', 'custom_msg_id', 'delay', 'mail_id', 'msg_id', 'opens', 'queued_at', 'received_at',
    'schedule_at', 'sender', 'sent_at', 'status', 'subject', 'to'].sort(), 'exactly the fields of the spec');
  t.match(m, { msg_id: msgId, subject: 'Hello', sender: f.sender, opens: 0, clicks: 0, custom_msg_id: 'order-1', custom_group_code: 'spring', schedule_at: null });
  t.equal(m.status, 3, 'captured by the sandbox in the transaction that acknowledged it');
  t.equal(m.sent_at, m.received_at);
  t.match(m.mail_id, /^\d{8}[a-z2-7]{16}$/);
  t.equal(m.mail_id.slice(0, 8), String(m.received_at).slice(0, 10).replace(/-/g, ''), 'the mail_id starts with the UTC reception date');
  t.match(m.received_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  t.equal(list.body.pagination.total_items, 4);
  t.equal(list.body.pagination.has_more, false);

  const detail = await f.s.api('GET', `/v1/mails/${m.mail_id}`);
  t.same(detail.body, m, 'the detail is the same record');
  const logs = await f.s.api('GET', `/v1/mails/${m.mail_id}/logs`);
  t.equal(logs.status, 200);
  t.same(logs.body.data.map((l: any) => [l.event, l.status]), [['received', 1], ['queued', 2], ['sent', 3]]);
  t.match(logs.body.data[2], { detail: 'captured by sandbox', response: '250 2.0.0 captured by sandbox' });
  t.match(logs.body.data[0], { at: String, detail: /http/, response: null });

  const byCategory = f.s.svc.db.prepare('SELECT slug FROM categories').pluck().all();
  t.same(byCategory, ['promocion-verano'], 'category folded to a slug and registered');
});
