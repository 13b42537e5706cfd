// The mail lists' query plans (issue 4: every list query stays fast at millions of rows): each
// filter is read through an index that seeks its rows and already gives the list's order, so a
// page costs its rows, not the window. bench/lists.ts measures the times; this pins the plans.
import t from 'tap';
import { tempDb } from '../../helpers/temp-db';
import { mailListQuery } from '../../../src/store/mail-filter';
import type { MailFilter } from '../../../src/store/mails';

t.test('every mail list filter seeks its index and sorts nothing', async (t) => {
  const db = tempDb(t, 'estafeta-plans-');
  const window = { from: 0, to: 2 ** 50 };
  const cases: Array<[string, Partial<MailFilter>, RegExp]> = [
    ['no filter', {}, /mails_by_received \(instance_id=\? AND received_at>\? AND received_at<\?\)/],
    ['msg_id', { msgId: 'x' }, /mails_by_msg \(instance_id=\? AND msg_id=\? AND received_at>\? AND received_at<\?\)/],
    ['mail_id', { mailId: 'x' }, /sqlite_autoindex_mails_1 \(mail_id=\?\)/],
    ['custom_msg_id', { customMsgId: 'x' }, /mails_by_custom_msg \(instance_id=\? AND custom_msg_id=\? AND received_at>\? AND received_at<\?\)/],
    ['recipient', { recipient: 'a@b.test' }, /mails_by_rcpt \(instance_id=\? AND rcpt=\? AND received_at>\? AND received_at<\?\)/],
    ['custom_group_code', { customGroupCode: 'x' }, /mails_by_group \(instance_id=\? AND custom_group_code=\? AND received_at>\? AND received_at<\?\)/],
    ['status', { status: 6 }, /mails_by_status \(instance_id=\? AND status=\? AND received_at>\? AND received_at<\?\)/],
    ['sender_id', { senderId: 1 }, /mails_by_sender \(instance_id=\? AND sender_id=\? AND received_at>\? AND received_at<\?\)/],
    ['msg_id beats status and sender', { msgId: 'x', status: 3, senderId: 1 }, /mails_by_msg /],
    ['recipient beats status', { recipient: 'a@b.test', status: 6 }, /mails_by_rcpt /],
    ['subject alone walks reception order', { subject: 'invoice' }, /mails_by_received \(instance_id=\? AND received_at>\? AND received_at<\?\)/],
  ];
  for (const [name, f, index] of cases) {
    const q = mailListQuery(1, { ...window, ...f });
    const plan = (db.prepare(`EXPLAIN QUERY PLAN SELECT ${q.select} ${q.from} ORDER BY ${q.orderBy} LIMIT 21`).all(...q.params) as { detail: string }[])
      .map((r) => r.detail).join(' | ');
    t.match(plan, index, `${name}: ${plan}`);
    if (!f.mailId) t.notMatch(plan, /TEMP B-TREE/, `${name}: the index gives the order`);
  }
});
