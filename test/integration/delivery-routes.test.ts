// Which host gets a delivery attempt: MX preference and fallback (unreachable hosts, greeting
// and post-greeting 4xx/5xx), null MX, the A record, relays, opportunistic TLS, closing sessions.
import t from 'tap';
import { startWorld, mailState, mailLogs, type World } from '../helpers/delivery-world';
import { startSink } from '../helpers/smtp-sink';
import { startFakeMx } from '../helpers/fake-mx';
import { waitFor } from '../helpers/service';

const restricted = (w: World, rcpt: string, list = 'restrictions'): boolean =>
  Boolean(w.ts.svc.db.prepare('SELECT 1 FROM suppressions WHERE recipient = ? AND list = ?').get(rcpt, list));

t.test('a null MX bounces at once; a DNS outage defers', async (t) => {
  const w = await startWorld(t, { zone: { 'nomail.test': { MX: [{ exchange: '.', priority: 0 }] } } });
  const q = await w.send(['x@nomail.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 6, { what: 'bounced' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.response, /null MX/);
  t.equal(w.sink.stats.connections, 0, 'no connection for a null MX');
  w.dns.setMode('servfail');
  const q2 = await w.send(['x@other.test']);
  await waitFor(() => mailState(w.ts.svc, q2.mailIds[0]).status === 5, { what: 'deferred on DNS failure' });
  t.match(mailLogs(w.ts.svc, q2.mailIds[0]).at(-1)?.response, /DNS/);
});

t.test('a domain that does not exist, or has no mail host, bounces at once and restricts the address', async (t) => {
  const w = await startWorld(t, { zone: { 'bare.test': { TXT: ['v=spf1 -all'] }, 'noaddr.test': { MX: [{ exchange: 'mx.noaddr.test', priority: 10 }] } } });
  const q = await w.send(['x@absent.test', 'y@bare.test', 'z@noaddr.test']);
  for (const [i, why] of [[0, /NXDOMAIN/], [1, /no mail host/], [2, /^550 5\.4\.4 the mail hosts of noaddr\.test \(mx\.noaddr\.test\) have no address/]] as const) {
    await waitFor(() => mailState(w.ts.svc, q.mailIds[i]).status === 6, { what: 'bounced' });
    t.match(mailLogs(w.ts.svc, q.mailIds[i]).at(-1)?.response, why);
  }
  t.ok(restricted(w, 'x@absent.test'), 'NXDOMAIN: address added to restrictions');
  t.ok(restricted(w, 'y@bare.test'), 'no MX, A or AAAA: address added to restrictions');
  t.equal(w.sink.stats.connections, 0);
});

t.test('a domain without MX gets its mail at its A record', async (t) => {
  const w = await startWorld(t, { zone: { 'plain.test': { A: ['127.0.0.1'] } } });
  const q = await w.send(['x@plain.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent' });
  t.same(w.sink.received[0].to, ['x@plain.test']);
});

t.test('with a relay every mail goes through it, authenticated, its name looked up through ESTAFETA_DNS_SERVERS', async (t) => {
  const relay = await startSink(t, { auth: { user: 'relayuser', pass: 's3cret' } });
  // relay.test exists only in the test's DNS zone: the system resolver would not find it.
  const w = await startWorld(t, { env: { ESTAFETA_RELAY: `smtp://relayuser:s3cret@relay.test:${relay.port}` }, zone: { 'relay.test': { A: ['127.0.0.1'] } } });
  const q = await w.send(['ana@example.test', 'zed@elsewhere.test']);
  await waitFor(() => q.mailIds.every((id) => mailState(w.ts.svc, id).status === 3), { what: 'sent via relay' });
  t.equal(relay.received.length, 2);
  t.same(relay.received.map((m) => m.user), ['relayuser', 'relayuser']);
  t.same(relay.received.map((m) => m.to[0]).sort(), ['ana@example.test', 'zed@elsewhere.test']);
  t.equal(w.sink.received.length, 0, 'the MX was not used');
});

t.test('a refused MAIL FROM: a relay wanting AUTH defers without restricting, any other 5xx bounces and restricts (CONTRACT §5)', async (t) => {
  const relay = await startSink(t, { auth: { user: 'relayuser', pass: 's3cret' } });
  const w = await startWorld(t, { env: { ESTAFETA_RELAY: `smtp://localhost:${relay.port}` } }); // no credentials configured
  const q = await w.send(['ana@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 5, { what: 'deferred' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.response, /^530 /, 'the relay\'s 530 to MAIL FROM');
  t.notOk(restricted(w, 'ana@example.test'), 'our configuration, not the recipient');

  const picky = await startWorld(t, { script: { refuseSender: { code: 550, text: '5.7.1 sender domain not accepted' } } });
  const p = await picky.send(['bo@example.test']);
  await waitFor(() => mailState(picky.ts.svc, p.mailIds[0]).status === 6, { what: 'bounced' });
  t.match(mailLogs(picky.ts.svc, p.mailIds[0]).at(-1)?.response, /^550 5\.7\.1 sender domain not accepted/);
  t.ok(restricted(picky, 'bo@example.test'), 'permanent failures add the address to restrictions');
});

t.test('MX hosts are tried in preference order: an unreachable first host falls through to the next', async (t) => {
  const w = await startWorld(t, { zone: {
    'multi.test': { MX: [{ exchange: 'backup.multi.test', priority: 20 }, { exchange: 'dead.multi.test', priority: 5 }, { exchange: 'primary.multi.test', priority: 10 }] },
    'dead.multi.test': { A: ['127.0.0.2'] }, 'primary.multi.test': { A: ['127.0.0.1'] }, 'backup.multi.test': { A: ['127.0.0.1'] },
  } });
  const q = await w.send(['x@multi.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent via the second-preferred MX' });
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.detail, /^primary\.multi\.test \[127\.0\.0\.1\]/, 'the lowest preference that answers wins');
  t.same(w.sink.received[0].to, ['x@multi.test']);
});

t.test('a host that greets with a 5xx is skipped for the next MX: no bounce, no restriction', async (t) => {
  const w = await startWorld(t, { zone: {
    'greet.test': { MX: [{ exchange: 'bad.greet.test', priority: 10 }, { exchange: 'good.greet.test', priority: 20 }] },
    'bad.greet.test': { A: ['127.0.0.5'] }, 'good.greet.test': { A: ['127.0.0.1'] },
  } });
  const bad = await startFakeMx(t, '127.0.0.5', w.sink.port, 'greet-554');
  const q = await w.send(['x@greet.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent via the backup MX' });
  t.ok(bad.sessions >= 1, 'the refusing host was tried first');
  t.same(w.sink.received.map((m) => m.to), [['x@greet.test']]);
  t.notOk(restricted(w, 'x@greet.test'), 'a greeting says nothing of the recipient');
});

t.test('a 4xx from a host after its greeting sends the mail on to the next MX in the same attempt; a 5xx there is the verdict', async (t) => {
  const w = await startWorld(t, { zone: {
    'busy.test': { MX: [{ exchange: 'first.busy.test', priority: 10 }, { exchange: 'second.busy.test', priority: 20 }] },
    'first.busy.test': { A: ['127.0.0.8'] }, 'second.busy.test': { A: ['127.0.0.1'] },
    'gone.test': { MX: [{ exchange: 'first.gone.test', priority: 10 }, { exchange: 'second.gone.test', priority: 20 }] },
    'first.gone.test': { A: ['127.0.0.9'] }, 'second.gone.test': { A: ['127.0.0.1'] },
  } });
  const busy = await startFakeMx(t, '127.0.0.8', w.sink.port, 'rcpt-451');
  const gone = await startFakeMx(t, '127.0.0.9', w.sink.port, 'rcpt-550');
  const q = await w.send(['x@busy.test', 'y@gone.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3 && mailState(w.ts.svc, q.mailIds[1]).status === 6, { what: 'sent via the second MX; bounced by the first' });
  t.ok(busy.sessions >= 1, 'the host answering 451 was tried first');
  t.equal(mailState(w.ts.svc, q.mailIds[0]).attempts, 1, 'one attempt: no deferral, no wait for a retry');
  t.same(mailLogs(w.ts.svc, q.mailIds[0]).map((l) => l.event), ['sent']);
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.detail, /^second\.busy\.test \[127\.0\.0\.1\]/);
  t.ok(gone.sessions >= 1);
  t.match(mailLogs(w.ts.svc, q.mailIds[1]).at(-1)?.response, /^550 5\.1\.1 no such mailbox/);
  t.same(w.sink.received.map((m) => m.to), [['x@busy.test']], 'the second MX of the refusing domain was never asked');
  t.ok(restricted(w, 'y@gone.test'));
});

t.test('a backup MX refusing (5xx) what the preferred host postponed (4xx) is not the verdict: the mail waits for its retry, the address is not restricted, and the log names both hosts', async (t) => {
  const w = await startWorld(t, { env: { ESTAFETA_RETRY_DELAYS: '30' }, zone: {
    'grey.test': { MX: [{ exchange: 'first.grey.test', priority: 10 }, { exchange: 'backup.grey.test', priority: 20 }] },
    'first.grey.test': { A: ['127.0.0.10'] }, 'backup.grey.test': { A: ['127.0.0.11'] },
  } });
  const first = await startFakeMx(t, '127.0.0.10', w.sink.port, 'rcpt-451');
  const backup = await startFakeMx(t, '127.0.0.11', w.sink.port, 'rcpt-550');
  const q = await w.send(['x@grey.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 5, { what: 'deferred' });
  t.ok(first.sessions >= 1 && backup.sessions >= 1, 'both hosts were asked in the attempt');
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1), {
    event: 'deferred', response: /^451 4\.3\.0 mailbox busy/,
    detail: /^first\.grey\.test \[127\.0\.0\.10\]:\d+; also tried backup\.grey\.test \[127\.0\.0\.11\]:\d+: 550 5\.1\.1 no such mailbox$/,
  });
  t.notOk(restricted(w, 'x@grey.test'));
});

t.test('a server named by two MX hosts is tried once per attempt', async (t) => {
  const w = await startWorld(t, { env: { ESTAFETA_RETRY_DELAYS: '30' }, zone: {
    'twice.test': { MX: [{ exchange: 'a.twice.test', priority: 10 }, { exchange: 'b.twice.test', priority: 20 }] },
    'a.twice.test': { A: ['127.0.0.12'] }, 'b.twice.test': { A: ['127.0.0.12'] },
  } });
  const mx = await startFakeMx(t, '127.0.0.12', w.sink.port, 'rcpt-451');
  const q = await w.send(['x@twice.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 5, { what: 'deferred' });
  t.equal(mx.rcpts, 1, 'one RCPT: the same server is not asked again under its second name');
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.detail, /^a\.twice\.test \[127\.0\.0\.12\]:\d+$/);
});

t.test('an MX that advertises STARTTLS and then refuses it gets the mail in clear text (opportunistic TLS)', async (t) => {
  const w = await startWorld(t, { zone: { 'notls.test': { MX: [{ exchange: 'mx.notls.test', priority: 10 }] }, 'mx.notls.test': { A: ['127.0.0.6'] } } });
  const mx = await startFakeMx(t, '127.0.0.6', w.sink.port, 'refuse-starttls');
  const q = await w.send(['x@notls.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent in clear text' });
  t.equal(mx.received.length, 1);
  t.match(mx.received[0], /^Subject: Hello\r$/m);
});

t.test('a UTF-8 envelope\'s own connection is closed even when the MX never answers its QUIT', async (t) => {
  const w = await startWorld(t, { zone: { 'noquit.test': { MX: [{ exchange: 'mx.noquit.test', priority: 10 }] }, 'mx.noquit.test': { A: ['127.0.0.7'] } } });
  const mx = await startFakeMx(t, '127.0.0.7', w.sink.port, 'ignore-quit');
  const q = await w.send(['üser@noquit.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent' });
  t.equal(mx.received.length, 1);
  // Without its answer the socket would stay open until the socket timeout (120 s), one per mail.
  await waitFor(() => mx.closed >= 1 || undefined, { what: 'the connection closed by the service' });
  t.equal(mx.closed, mx.sessions, 'no session left open');
});

t.test('a relay named by a host name DNS does not serve (localhost) is found by the system resolver', async (t) => {
  const relay = await startSink(t);
  const w = await startWorld(t, { env: { ESTAFETA_RELAY: `smtp://localhost:${relay.port}` } });
  const q = await w.send(['ana@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent via the relay' });
  t.same(relay.received.map((m) => m.to), [['ana@example.test']]);
});
