// What becomes of a mail at the MX's answer and over time: deferral and retry, bounce and
// restriction, drops at a retry, the queue age, sandbox captures, consent. Routing (which host
// gets the attempt) is in delivery-routes.test.ts.
import t from 'tap';
import { startWorld, mailState, mailLogs, type World } from '../helpers/delivery-world';
import { waitFor } from '../helpers/service';
import { addSuppression } from '../../src/store/suppressions';

const restricted = (w: World, rcpt: string, list = 'restrictions'): boolean =>
  Boolean(w.ts.svc.db.prepare('SELECT 1 FROM suppressions WHERE recipient = ? AND list = ?').get(rcpt, list));


t.test('a 451 from the MX defers the mail (5) and the next attempt sends it (3)', async (t) => {
  const w = await startWorld(t, { script: { failFirst: 1 } });
  const q = await w.send(['ana@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).attempts >= 1, { what: 'a first attempt' });
  t.same(mailLogs(w.ts.svc, q.mailIds[0])[0]?.event, 'deferred', 'the first outcome is a deferral');
  t.match(mailLogs(w.ts.svc, q.mailIds[0])[0]?.response, /^451/, 'the remote reply is logged');
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent after retry' });
  t.same(mailLogs(w.ts.svc, q.mailIds[0]).map((l) => [l.event, l.status]), [['deferred', 5], ['sent', 3]]);
  t.equal(mailState(w.ts.svc, q.mailIds[0]).attempts, 2);
  t.equal(w.sink.received.length, 1);
  t.same(w.sink.received[0].to, ['ana@example.test']);
});

t.test('a 550 bounces the mail (6), restricts the address, and the next send to it is dropped (4) without a connection', async (t) => {
  const w = await startWorld(t, { script: { reject: (r) => r === 'gone@example.test' } });
  const q = await w.send(['gone@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 6, { what: 'bounced' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.response, /^550/);
  t.ok(restricted(w, 'gone@example.test'), 'address added to restrictions');
  const attempts = w.sink.stats.attempts;
  const q2 = await w.send(['gone@example.test']);
  await waitFor(() => mailState(w.ts.svc, q2.mailIds[0]).status === 4, { what: 'dropped' });
  t.match(mailLogs(w.ts.svc, q2.mailIds[0]).at(-1)?.detail, /restrictions list/);
  t.equal(w.sink.stats.attempts, attempts, 'no transaction was attempted for the suppressed address');
});

t.test('an address suppressed while its mail waits for a retry is dropped at the retry, in whatever case it was listed', async (t) => {
  const w = await startWorld(t, { script: { failFirst: 1 }, env: { ESTAFETA_RETRY_DELAYS: '3' } });
  const q = await w.send(['Later@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 5, { what: 'deferred' });
  const instanceId = (w.ts.svc.db.prepare('SELECT instance_id FROM mails WHERE mail_id = ?').get(q.mailIds[0]) as { instance_id: number }).instance_id;
  addSuppression(w.ts.svc.db, instanceId, { list: 'unsubscribes', recipient: 'LATER@example.test', reason: null, source: 'test', at: Date.now() });
  const used = (): number => (w.ts.svc.db.prepare('SELECT SUM(sent) AS n FROM send_usage WHERE instance_id = ?').get(instanceId) as { n: number }).n;
  t.equal(used(), 1, 'charged at acceptance');
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 4, { what: 'dropped at the retry' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.detail, /unsubscribes list/);
  t.equal(w.sink.received.length, 0, 'never delivered');
  t.equal(used(), 0, 'a suppressed address ends dropped without a charge (spec, Mail delivery status)');
});

t.test('a refused connection defers; once the mail is older than the maximum queue age it bounces without a restriction', async (t) => {
  const w = await startWorld(t, {
    env: { ESTAFETA_MAX_QUEUE_AGE: '6' },
    zone: { 'down.test': { MX: [{ exchange: 'mx.down.test', priority: 5 }] }, 'mx.down.test': { A: ['127.0.0.2'] } },
  });
  const q = await w.send(['x@down.test']);
  await waitFor(() => mailLogs(w.ts.svc, q.mailIds[0]).length >= 1, { what: 'a first outcome' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0])[0], { event: 'deferred', status: 5, response: /ECONNECTION|ECONNREFUSED/ });
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 6, { what: 'expired' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.detail, /maximum queue age/);
  t.notOk(restricted(w, 'x@down.test'), 'an expiry is not a verdict on the address');
  const bounced = (await w.ts.api('GET', `/v1/activities/bounced?mail_id=${q.mailIds[0]}`)).body.data[0];
  t.match(bounced?.reason, /^expired: /, 'the bounce report says it expired, not the last connection error');
  t.match(bounced?.reason, /last: .*(ECONNECTION|ECONNREFUSED).*mx\.down\.test/, 'and what the last attempt got, from which host');
});

t.test('a retry due after the maximum queue age is not brought forward: the still-deferred mail is bounced at the age, untried (CONTRACT §2)', async (t) => {
  // The MX would take the mail at a second attempt; the age (6 s) comes long before the retry (30 s).
  const w = await startWorld(t, { script: { failFirst: 1 }, env: { ESTAFETA_RETRY_DELAYS: '30', ESTAFETA_MAX_QUEUE_AGE: '6' } });
  const q = await w.send(['late@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 6, { what: 'bounced at the queue age' });
  t.equal(w.sink.received.length, 0, 'no second attempt reached the MX');
  t.equal(mailState(w.ts.svc, q.mailIds[0]).attempts, 1, 'the expiry is not an attempt');
  t.same(mailLogs(w.ts.svc, q.mailIds[0]).map((l) => [l.event, l.status]), [['deferred', 5], ['bounced', 6]]);
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1), { response: /^451/, detail: /^expired: .*maximum queue age \(6 s\); last: 451 .*mx\.example\.test/ });
  t.notOk(restricted(w, 'late@example.test'));
});

t.test('an address suppressed while its mail waits ends dropped and uncharged at the queue age, not bounced: the drop checks come before the expiry', async (t) => {
  const w = await startWorld(t, { script: { failFirst: 100 }, env: { ESTAFETA_RETRY_DELAYS: '30', ESTAFETA_MAX_QUEUE_AGE: '6' } });
  const q = await w.send(['gone@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 5, { what: 'deferred' });
  const { instance_id: instanceId, received_at: receivedAt } = w.ts.svc.db.prepare('SELECT instance_id, received_at FROM mails WHERE mail_id = ?').get(q.mailIds[0]) as { instance_id: number; received_at: number };
  addSuppression(w.ts.svc.db, instanceId, { list: 'unsubscribes', recipient: 'gone@example.test', reason: null, source: 'test', at: Date.now() });
  t.ok(Date.now() < receivedAt + 6000, 'suppressed before the age (the case under test)');
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status !== 5, { what: 'final at the queue age' });
  t.equal(mailState(w.ts.svc, q.mailIds[0]).status, 4, 'dropped, not bounced');
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.detail, /unsubscribes list/);
  const used = (w.ts.svc.db.prepare('SELECT SUM(sent) AS n FROM send_usage WHERE instance_id = ?').get(instanceId) as { n: number }).n;
  t.equal(used, 0, 'not charged');
});

t.test('sandbox recipients are captured and attachments over the functional limit are dropped, both without a connection', async (t) => {
  const w = await startWorld(t);
  const lim = await w.ts.cli('instance', 'limits', w.slug, '--attachment-max-bytes', '1000', '--json');
  t.equal(lim.code, 0, lim.stdout);
  const s = await w.send([`x@${w.slug}.sandbox.test`]);
  const a = await w.send(['ana@example.test'], { attachments: [{ type: 'application/octet-stream', filename: 'big.bin', content: Buffer.alloc(2000, 7).toString('base64') }] });
  await waitFor(() => mailState(w.ts.svc, s.mailIds[0]).status === 3 && mailState(w.ts.svc, a.mailIds[0]).status === 4, { what: 'captured and dropped' });
  t.equal(mailLogs(w.ts.svc, s.mailIds[0]).at(-1)?.detail, 'captured by sandbox');
  t.match(mailLogs(w.ts.svc, a.mailIds[0]).at(-1)?.detail, /functional limit of 1000 bytes/);
  t.equal(w.sink.stats.connections, 0, 'nothing was relayed');
});

t.test('a send to a sandbox and a real recipient: the capture is final at once, the message bytes stay for the other', async (t) => {
  const w = await startWorld(t);
  const q = await w.send([`x@${w.slug}.sandbox.test`, 'ana@example.test']);
  const captured = mailState(w.ts.svc, q.mailIds[0]);
  t.equal(captured.status, 3, 'sent (captured) when the 200 came back');
  t.equal(captured.attempts, 0, 'no delivery attempt');
  t.same(mailLogs(w.ts.svc, q.mailIds[0]).map((l) => [l.event, l.detail]), [['sent', 'captured by sandbox']]);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[1]).status === 3, { what: 'the real recipient sent' });
  t.same(w.sink.received.map((m) => m.to), [['ana@example.test']], 'only the real recipient was relayed');
});

t.test('consent revoked while a mail waits for its retry drops it at the next attempt, uncharged; a consent kept is delivered (spec: "can later end in dropped")', async (t) => {
  const w = await startWorld(t, { script: { failFirst: 2 }, env: { ESTAFETA_RETRY_DELAYS: '3' } });
  const purposes = (await w.ts.api('GET', '/v1/consent-purposes')).body.data as { id: number; code: string }[];
  const marketing = purposes.find((p) => p.code === 'marketing')?.id;
  const term = (await w.ts.cli('term', 'add', w.slug, '--name', 'Offers', '--type', 'marketing', '--purposes', 'marketing', '--channels', 'mail', '--json')).json;
  await w.ts.cli('term', 'version', 'add', w.slug, String(term.id), '--version', 'v1', '--body', 'Text', '--current', '--json');
  const consent = async (contact: string, action: 'allow' | 'deny'): Promise<void> => {
    const r = await w.ts.api('POST', '/v1/consent-events', { body: { term_id: term.id, method: 'single_opt_in', rules: [{ contact_type: 'email_address', contact, purpose_id: marketing, action }] } });
    if (r.status !== 201) throw new Error(r.text);
  };
  await consent('ana@example.test', 'allow');
  await consent('bo@example.test', 'allow');
  t.equal((await w.ts.cli('sender', 'consent', w.slug, 'news@brand.test', '--consent', 'marketing:opt_in', '--json')).code, 0);
  const q = await w.send(['ana@example.test', 'bo@example.test']);
  await waitFor(() => q.mailIds.every((id) => mailState(w.ts.svc, id).status === 5), { what: 'both deferred' });
  await consent('ana@example.test', 'deny');
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 4, { what: 'dropped at its next attempt' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.detail, /^consent: purpose marketing \(opt_in\): explicit revocation/);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[1]).status === 3, { what: 'the other delivered' });
  t.same(w.sink.received.map((m) => m.to), [['bo@example.test']], 'the revoked recipient never got it');
  const charged = (id: string): unknown => w.ts.svc.db.prepare('SELECT charged FROM mails WHERE mail_id = ?').pluck().get(id);
  t.same([charged(q.mailIds[0]), charged(q.mailIds[1])], [0, 1], 'the drop is not charged');
});
