import t from 'tap';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { simpleParser } from 'mailparser';
import { startWorld } from '../helpers/delivery-world';
import { queueMail, mailState, mailLogs } from '../helpers/enqueue';
import { waitFor } from '../helpers/service';

t.test('a queued mail reaches the MX of its domain signed with the sender domain key, and each recipient gets its own tracked copy', async (t) => {
  const w = await startWorld(t);
  const q = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['ana@example.test', 'bo@example.test'] });
  await waitFor(() => q.mailIds.every((id) => mailState(w.ts.svc, id).status === 3), { what: 'both mails sent' });
  t.equal(w.sink.received.length, 2, 'one delivery per recipient');
  const byRcpt = new Map(w.sink.received.map((m) => [m.to[0], m]));
  t.same([...byRcpt.keys()].sort(), ['ana@example.test', 'bo@example.test']);
  for (const [i, rcpt] of ['ana@example.test', 'bo@example.test'].entries()) {
    const m = byRcpt.get(rcpt);
    if (!m) throw new Error('missing');
    t.equal(m.from, `bounces+${q.mailIds[i]}@brand.test`, 'VERP return path names the mail');
    const result = await dkimVerify(m.raw, { resolver: w.txtResolver });
    const sig = result.results[0];
    t.equal(sig?.status.result, 'pass', `DKIM passes for ${rcpt}`);
    t.equal(sig?.signingDomain, 'brand.test');
    t.equal(sig?.selector, 's1');
    const parsed = await simpleParser(m.raw);
    const html = String(parsed.html);
    t.match(html, new RegExp(`/t/o/${q.mailIds[i]}/`), 'open pixel of this mail');
    t.match(html, new RegExp(`/t/c/${q.mailIds[i]}/[^?]+\\?u=https%3A%2F%2Fexample.org%2Fa%3Fx%3D1%26y%3D2`), 'link rewritten for this mail');
    t.notMatch(html, /href="https:\/\/example\.org/, 'no untracked link left');
    t.match(m.raw.toString(), /\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n/);
    t.match(m.raw.toString(), /List-Unsubscribe: <http:\/\/[^>]+\/t\/u\//);
    const st = mailState(w.ts.svc, q.mailIds[i]);
    t.ok(st.sent_at, 'sent_at set');
    const logs = mailLogs(w.ts.svc, q.mailIds[i]);
    t.equal(logs.at(-1)?.event, 'sent');
    t.match(logs.at(-1)?.response, /^250 /, 'remote reply logged');
  }
  await waitFor(() => !require('node:fs').existsSync(require('node:path').join(w.ts.dataDir, 'messages', q.spoolFile)), { what: 'spool removed' });
});

t.test('a send through the API from a validated domain is delivered signed, each recipient tracked apart, and its logs and opens are readable', async (t) => {
  const w = await startWorld(t, { verify: true });
  const send = await w.ts.api('POST', '/v1/mails/send', {
    body: { sender_email: 'news@brand.test', to: [{ email: 'ana@example.test' }, { email: 'bo@example.test' }], subject: 'Launch', html: '<html><body><p>See <a href="https://brand.test/launch">it</a></p></body></html>', text: 'See it' },
  });
  t.equal(send.status, 200, JSON.stringify(send.body));
  const list = await waitFor(async () => {
    const r = await w.ts.api('GET', `/v1/mails?msg_id=${send.body.message_id}`);
    return r.body.data?.length === 2 && r.body.data.every((m: { status: number }) => m.status === 3) ? r.body.data : null;
  }, { what: 'both mails sent' });
  t.equal(w.sink.received.length, 2);
  for (const m of w.sink.received) {
    const result = await dkimVerify(m.raw, { resolver: w.txtResolver });
    t.equal(result.results[0]?.status.result, 'pass', `DKIM of the delivered bytes verifies for ${m.to[0]}`);
    const mail = list.find((x: { to: string }) => x.to === m.to[0]);
    t.equal(m.from, `bounces+${mail.mail_id}@brand.test`);
    t.match(String((await simpleParser(m.raw)).html), new RegExp(`/t/o/${mail.mail_id}/`), 'its own pixel');
    t.ok(mail.sent_at, 'sent_at shown');
    t.type(mail.delay, 'number', 'delay computed');
  }
  const logs = await w.ts.api('GET', `/v1/mails/${list[0].mail_id}/logs`);
  t.same(logs.body.data.map((l: { event: string }) => l.event), ['received', 'queued', 'sent']);
});
