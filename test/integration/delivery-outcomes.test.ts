import t from 'tap';
import { startWorld } from '../helpers/delivery-world';
import { startSink } from '../helpers/smtp-sink';
import { queueMail, mailState, mailLogs } from '../helpers/enqueue';
import { waitFor } from '../helpers/service';

const restricted = (w: { ts: { svc: { db: { prepare(s: string): { get(...a: unknown[]): unknown } } } } }, rcpt: string, list = 'restrictions'): boolean =>
  Boolean(w.ts.svc.db.prepare('SELECT 1 FROM suppressions WHERE recipient = ? AND list = ?').get(rcpt, list));

t.test('a 451 from the MX defers the mail (5) and the next attempt sends it (3)', async (t) => {
  const w = await startWorld(t, { script: { failFirst: 1 } });
  const q = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['ana@example.test'] });
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 5, { what: 'deferred' });
  t.ok(mailState(w.ts.svc, q.mailIds[0]).next_attempt_at, 'next attempt scheduled');
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent after retry' });
  t.same(mailLogs(w.ts.svc, q.mailIds[0]).map((l) => l.event), ['deferred', 'sent']);
  t.match(mailLogs(w.ts.svc, q.mailIds[0])[0].response, /^451/, 'the remote reply is logged');
  t.equal(mailState(w.ts.svc, q.mailIds[0]).attempts, 2);
  t.equal(w.sink.received.length, 1);
});

t.test('a 550 bounces the mail (6), restricts the address, and the next mail to it is dropped (4) without a connection', async (t) => {
  const w = await startWorld(t, { script: { reject: (r) => r === 'gone@example.test' } });
  const q = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['gone@example.test'] });
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 6, { what: 'bounced' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.response, /^550/);
  t.ok(restricted(w, 'gone@example.test'), 'address added to restrictions');
  const attempts = w.sink.stats.attempts;
  const q2 = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['gone@example.test'] });
  await waitFor(() => mailState(w.ts.svc, q2.mailIds[0]).status === 4, { what: 'dropped' });
  t.match(mailLogs(w.ts.svc, q2.mailIds[0]).at(-1)?.detail, /restrictions list/);
  t.equal(w.sink.stats.attempts, attempts, 'no transaction was attempted for the suppressed address');
});

t.test('refused connections defer; a mail older than the maximum queue age bounces instead', async (t) => {
  const w = await startWorld(t, { zone: { 'down.test': { MX: [{ exchange: 'mx.down.test', priority: 5 }] }, 'mx.down.test': { A: ['127.0.0.2'] } } });
  const q = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['x@down.test'] });
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 5, { what: 'deferred' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0])[0].response, /ECONNECTION|ECONNREFUSED/);
  const old = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['y@down.test'], receivedAt: Date.now() - 6 * 86400_000 });
  await waitFor(() => mailState(w.ts.svc, old.mailIds[0]).status === 6, { what: 'expired' });
  t.match(mailLogs(w.ts.svc, old.mailIds[0]).at(-1)?.detail, /maximum queue age/);
  t.notOk(restricted(w, 'y@down.test'), 'an expiry is not a verdict on the address');
});

t.test('a null MX bounces at once; a DNS outage defers', async (t) => {
  const w = await startWorld(t, { zone: { 'nomail.test': { MX: [{ exchange: '.', priority: 0 }] } } });
  const q = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['x@nomail.test'] });
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 6, { what: 'bounced' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.response, /null MX/);
  w.dns.setMode('servfail');
  const q2 = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['x@other.test'] });
  await waitFor(() => mailState(w.ts.svc, q2.mailIds[0]).status === 5, { what: 'deferred on DNS failure' });
  t.match(mailLogs(w.ts.svc, q2.mailIds[0]).at(-1)?.response, /DNS/);
});

t.test('a domain without MX gets its mail at its A record', async (t) => {
  const w = await startWorld(t, { zone: { 'plain.test': { A: ['127.0.0.1'] } } });
  const q = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['x@plain.test'] });
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent' });
  t.same(w.sink.received[0].to, ['x@plain.test']);
});

t.test('sandbox recipients are captured and attachments over the functional limit are dropped, both without a connection', async (t) => {
  const w = await startWorld(t);
  const s = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: [`x@${w.slug}.sandbox.test`] });
  const a = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['ana@example.test'], attachmentBytes: 2 * 1048576 });
  await waitFor(() => mailState(w.ts.svc, s.mailIds[0]).status === 3 && mailState(w.ts.svc, a.mailIds[0]).status === 4, { what: 'captured and dropped' });
  t.equal(mailLogs(w.ts.svc, s.mailIds[0]).at(-1)?.detail, 'captured by sandbox');
  t.match(mailLogs(w.ts.svc, a.mailIds[0]).at(-1)?.detail, /functional limit of 1048576 bytes/);
  t.equal(w.sink.stats.connections, 0, 'nothing was relayed');
});

t.test('with a relay every mail goes through it, authenticated', async (t) => {
  const relay = await startSink(t, { auth: { user: 'relayuser', pass: 's3cret' } });
  const w = await startWorld(t, { env: { ESTAFETA_RELAY: `smtp://relayuser:s3cret@127.0.0.1:${relay.port}` } });
  const q = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['ana@example.test', 'zed@elsewhere.test'] });
  await waitFor(() => q.mailIds.every((id) => mailState(w.ts.svc, id).status === 3), { what: 'sent via relay' });
  t.equal(relay.received.length, 2);
  t.same(relay.received.map((m) => m.user), ['relayuser', 'relayuser']);
  t.equal(w.sink.received.length, 0, 'the MX was not used');
});

t.test('MX hosts are tried in preference order: an unreachable first host falls through to the next', async (t) => {
  const w = await startWorld(t, { zone: {
    'multi.test': { MX: [{ exchange: 'backup.multi.test', priority: 20 }, { exchange: 'dead.multi.test', priority: 5 }, { exchange: 'primary.multi.test', priority: 10 }] },
    'dead.multi.test': { A: ['127.0.0.2'] }, 'primary.multi.test': { A: ['127.0.0.1'] }, 'backup.multi.test': { A: ['127.0.0.1'] },
  } });
  const q = await queueMail(w.ts.svc, { instanceId: w.instanceId, from: 'news@brand.test', to: ['x@multi.test'] });
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent via the second-preferred MX' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.detail, /^primary\.multi\.test \[127\.0\.0\.1\]/, 'the lowest preference that answers wins');
  t.same(w.sink.received[0].to, ['x@multi.test']);
});
