import t from 'tap';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { simpleParser } from 'mailparser';
import { startWorld, mailState, mailLogs } from '../helpers/delivery-world';
import { waitFor } from '../helpers/service';
import { spoolHolds } from '../helpers/spool-files';
import { smtpConnect } from '../helpers/smtp-client';

t.test('a send through the API reaches the MX of each recipient domain signed with the sender domain key, and each recipient gets its own tracked copy', async (t) => {
  const w = await startWorld(t);
  const q = await w.send(['ana@example.test', 'bo@example.test'], { headers: { 'X-API-ID': 'abc', 'x-lower-case': 'v', 'Resent-Bcc': 'hidden@example.test', 'Content-Length': '5' } });
  const spoolFile = (w.ts.svc.db.prepare('SELECT spool_file FROM messages WHERE msg_id = ?').get(q.msgId) as { spool_file: string }).spool_file;
  await waitFor(() => q.mailIds.every((id) => mailState(w.ts.svc, id).status === 3), { what: 'both mails sent' });
  t.equal(w.sink.received.length, 2, 'one delivery per recipient');
  const byRcpt = new Map(w.sink.received.map((m) => [m.to[0], m]));
  t.same([...byRcpt.keys()].sort(), ['ana@example.test', 'bo@example.test']);
  for (const [i, rcpt] of ['ana@example.test', 'bo@example.test'].entries()) {
    const m = byRcpt.get(rcpt);
    if (!m) throw new Error('missing');
    t.match(m.from, new RegExp(`^bounces\\+${q.mailIds[i]}\\.[0-9a-f]{20}@brand\\.test$`), 'VERP return path names the mail, signed');
    const result = await dkimVerify(m.raw, { resolver: w.txtResolver });
    const sig = result.results[0];
    t.equal(sig?.status.result, 'pass', `DKIM of the delivered bytes verifies against the published key for ${rcpt}`);
    t.equal(sig?.signingDomain, 'brand.test');
    t.equal(sig?.selector, 's1');
    const parsed = await simpleParser(m.raw);
    const html = String(parsed.html);
    t.match(html, new RegExp(`/t/o/${q.mailIds[i]}/`), 'open pixel of this mail');
    t.notMatch(html, new RegExp(`/t/[oc]/${q.mailIds[1 - i]}/`), 'nothing of the other recipient\'s mail');
    t.match(html, new RegExp(`/t/c/${q.mailIds[i]}/[^?]+\\?u=https%3A%2F%2Fexample.org%2Fa%3Fx%3D1%26y%3D2`), 'link rewritten for this mail');
    t.notMatch(html, /href="https:\/\/example\.org/, 'no untracked link left');
    t.match(m.raw.toString(), /\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n/);
    // Spec, send rule 2: the headers the platform writes at delivery.
    const head = m.raw.toString('latin1').split('\r\n\r\n')[0];
    const field = (name: string) => [...head.matchAll(new RegExp(`^${name}: (.*)$`, 'gim'))].map((x) => x[1]);
    t.same(field('Sender'), ['news@brand.test'], 'Sender: the registered sender');
    t.same(field('Bounce-To'), [m.from], 'Bounce-To: the return path');
    t.same(field('X-Mailer'), ['Estafeta']);
    t.same(field('Priority'), ['normal']);
    t.same(field('Message-ID'), [`<${q.msgId}@mta.estafeta.test>`], 'the Message-ID set at acceptance, once (none of the SMTP client library\'s own)');
    t.ok(/^X-API-ID: abc$/m.test(head) && /^x-lower-case: v$/m.test(head), 'custom header names as the client wrote them');
    t.same([...head.matchAll(/^(Resent-Bcc|Content-Length):/gim)], [], 'Resent-Bcc and Content-Length dropped, as Postfix drops them');
    t.ok(m.raw.toString().includes(`List-Unsubscribe: <${w.ts.url}/t/u/${q.mailIds[i]}/`), 'with port 0, the default public URL names the port bound (CONTRACT §2)');
    t.match(m.raw.toString(), new RegExp(`^DKIM-Signature: [^]*?\\r\\nReceived: by mta\\.estafeta\\.test \\(Estafeta\\) with HTTP id ${q.msgId.replace('.', '\\.')}\\r\\n\\tfor <${rcpt}>; \\w{3}, \\d\\d \\w{3} \\d{4} \\d\\d:\\d\\d:\\d\\d \\+0000\\r\\n`),
      'the platform\'s Received line, under the signature');
    const logs = mailLogs(w.ts.svc, q.mailIds[i]);
    t.equal(logs.at(-1)?.event, 'sent');
    t.match(logs.at(-1)?.response, /^250 /, 'remote reply logged');
  }
  const list = await w.ts.api('GET', `/v1/mails?msg_id=${q.msgId}`);
  for (const mail of list.body.data) {
    t.ok(mail.sent_at, 'sent_at shown');
    t.type(mail.delay, 'number', 'delay computed');
  }
  const logs = await w.ts.api('GET', `/v1/mails/${q.mailIds[0]}/logs`);
  t.same(logs.body.data.map((l: { event: string }) => l.event), ['received', 'queued', 'sent']);
  t.same(logs.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: 3, total_pages: 1 }, 'the spec\'s default page size');
  t.match(spoolFile, /^seg-\d{6}\.spool:\d+:\d+$/, 'the bytes were appended to a spool segment');
  await waitFor(() => !spoolHolds(w.ts.dataDir, spoolFile), { what: 'spool released once every recipient is final' });
});

t.test('an 8-bit part leaves in 7 bits (quoted-printable text, base64 otherwise), so a 7-bit MX takes it and the signature holds; raw UTF-8 headers still announce BODY=8BITMIME', async (t) => {
  const w = await startWorld(t, { script: { no8BitMime: true } });
  const key = (await w.ts.cli('apikey', 'create', w.slug, '--json')).json.api_key as string;
  const c = await smtpConnect(t, w.ts.svc.ports.smtp as number);
  t.equal(await c.login(w.slug, key), null);
  const eight = Buffer.from('From: news@brand.test\r\nTo: ana@example.test\r\nSubject: =?utf-8?Q?ol=C3=A1?=\r\nMIME-Version: 1.0\r\n'
    + 'Content-Type: multipart/mixed; boundary=zz\r\nContent-Transfer-Encoding: 8bit\r\n\r\n'
    + '--zz\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nñandú \r\nsegunda línea\r\n'
    + '--zz\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=b.bin\r\nContent-Transfer-Encoding: 8bit\r\n\r\n\u00ff\u00fe data\r\n'
    + '--zz--\r\n', 'utf8');
  const seven = 'Return-Path: <attacker@evil.test>\r\nDKIM-Signature: v=1; a=rsa-sha256; d=evil.test; s=x; h=from; bh=AA==; b=AA==\r\nContent-Length: 5\r\n'
    + 'From: news@brand.test\r\nSender: ceo@bank.test\r\nX-Mailer: Outlook\r\nTo: bo@example.test\r\nSubject: plain\r\n\r\nascii only\r\n';
  t.equal((await c.send('news@brand.test', ['ana@example.test'], eight)).err, null);
  t.equal((await c.send('news@brand.test', ['bo@example.test'], seven)).err, null);
  // Lines SMTP cannot carry (RFC 5322 §2.1.1): a header line of 1,500 octets, and an attached
  // message (which takes no transfer encoding of its own) holding one of 1,200 and 8-bit text.
  const long = 'From: news@brand.test\r\nTo: cy@example.test\r\nSubject: long lines\r\nX-Long: ' + 'Q'.repeat(1500) + '\r\nMIME-Version: 1.0\r\n'
    + 'Content-Type: multipart/mixed; boundary=yy\r\n\r\n--yy\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n'
    + '--yy\r\nContent-Type: message/rfc822\r\nContent-Transfer-Encoding: 8bit\r\n\r\nSubject: inner\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n' + 'W'.repeat(1200) + '\r\nñandú\r\n--yy--\r\n';
  t.equal((await c.send('news@brand.test', ['cy@example.test'], Buffer.from(long, 'utf8'))).err, null);
  const got = await waitFor(() => (w.sink.received.length >= 3 ? w.sink.received : undefined), { what: 'all three at the MX' });
  const cy = got?.find((m) => m.to.includes('cy@example.test'));
  if (!cy) throw new Error('missing');
  t.ok(cy.raw.toString('latin1').split('\r\n').every((l) => l.length <= 998), 'no delivered line over 998 octets');
  t.ok(cy.raw.every((b) => b < 0x80), 'and no 8-bit byte, the attached message\'s included');
  t.equal((await dkimVerify(cy.raw, { resolver: w.txtResolver })).results[0]?.status.result, 'pass', 'signed after folding');
  const cyParsed = await simpleParser(cy.raw);
  t.equal(String(cyParsed.headers.get('x-long')).replace(/\s/g, ''), 'Q'.repeat(1500), 'the long field\'s value, folded');
  const inner = await simpleParser(cyParsed.attachments[0].content);
  t.equal(inner.text, `${'W'.repeat(1200)}\nñandú`, 'the attached message\'s text unchanged once decoded');
  const of = (rcpt: string) => got?.find((m) => m.to.includes(rcpt));
  const ana = of('ana@example.test');
  if (!ana) throw new Error('missing');
  t.ok(ana.raw.every((b) => b < 0x80), 'RFC 6152: no 8-bit byte reaches an MX without 8BITMIME');
  t.equal(ana.mailArgs.BODY, undefined, 'nothing to announce');
  const text = ana.raw.toString('latin1');
  t.match(text, /Content-Type: multipart\/mixed; boundary=zz\r\nContent-Transfer-Encoding: 7bit\r\n/, 'the multipart relabelled 7bit once its parts are');
  t.match(text, /charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=C3=B1and=C3=BA=20\r\nsegunda l=C3=ADnea\r\n/, 'text in quoted-printable, lines kept');
  const parsed = await simpleParser(ana.raw);
  t.equal(parsed.text, 'ñandú \nsegunda línea', 'the same text once decoded');
  t.same(parsed.attachments[0]?.content, Buffer.from('\u00ff\u00fe data', 'utf8'), 'the attachment\'s bytes unchanged (base64)');
  t.equal((await dkimVerify(ana.raw, { resolver: w.txtResolver })).results[0]?.status.result, 'pass', 'signed after the conversion (RFC 6376 §5.3)');
  t.equal(of('bo@example.test')?.mailArgs.BODY, undefined, '7-bit: no parameter');
  // An SMTPUTF8 client's raw UTF-8 header cannot be converted: it goes 8-bit, announced where offered.
  const w8 = await startWorld(t);
  const key8 = (await w8.ts.cli('apikey', 'create', w8.slug, '--json')).json.api_key as string;
  const c8 = await smtpConnect(t, w8.ts.svc.ports.smtp as number);
  t.equal(await c8.login(w8.slug, key8), null);
  t.equal((await c8.send('news@brand.test', ['ana@example.test'], Buffer.from('From: news@brand.test\r\nTo: ana@example.test\r\nSubject: olá\r\n\r\nhi\r\n', 'utf8'))).err, null);
  const utf8 = await waitFor(() => w8.sink.received[0], { what: 'at the MX' });
  t.equal(utf8.mailArgs.BODY, '8BITMIME', 'RFC 6152: 8-bit data announced');
  t.ok(utf8.raw.includes(Buffer.from('Subject: olá')), 'the UTF-8 header itself');
  const head = of('bo@example.test')?.raw.toString('latin1').split('\r\n\r\n')[0] ?? '';
  t.same([...head.matchAll(/^(Sender|X-Mailer): (.*)$/gim)].map((x) => `${x[1]}: ${x[2]}`), ['Sender: news@brand.test', 'X-Mailer: Estafeta'],
    'a client\'s Sender and X-Mailer are replaced by the platform\'s, not delivered beside them');
  t.same([...head.matchAll(/^(Return-Path|Content-Length):.*$/gim)], [], 'a client\'s Return-Path and Content-Length are dropped (the envelope says where bounces go)');
  t.same([...head.matchAll(/^DKIM-Signature:.*\bd=([^;\s]+)/gim)].map((x) => x[1]), ['brand.test'], 'the only signature is the platform\'s');
});

t.test('RFC 6531: a UTF-8 local part goes with SMTPUTF8 to a host that offers it, and bounces 5.6.7 (no restriction) where it is not offered', async (t) => {
  const w = await startWorld(t);
  const sent = await w.send(['josé@example.test']);
  // The sink holds the mail before its 250 reaches the service: the state is what to wait for.
  await waitFor(() => mailState(w.ts.svc, sent.mailIds[0]).status === 3, { what: 'sent' });
  const got = w.sink.received[0];
  t.same(got.to, ['josé@example.test']);
  t.equal(got.mailArgs.SMTPUTF8, true, 'MAIL FROM declared SMTPUTF8');

  const old = await startWorld(t, { script: { noSmtpUtf8: true } });
  const refused = await old.send(['josé@example.test', 'ana@example.test']);
  await waitFor(() => refused.mailIds.every((id) => [3, 6].includes(mailState(old.ts.svc, id).status)), { what: 'both final' });
  t.equal(mailState(old.ts.svc, refused.mailIds[0]).status, 6, 'bounced');
  t.match(mailLogs(old.ts.svc, refused.mailIds[0]).map((l) => l.response).join('\n'), /^550 5\.6\.7 SMTPUTF8 is required, but was not offered by host /m);
  t.same(old.sink.received.map((m) => m.to), [['ana@example.test']], 'only the ASCII recipient reached the MX');
  t.equal(mailState(old.ts.svc, refused.mailIds[1]).status, 3);
  const restrictions = await old.ts.api('GET', '/v1/mail-restrictions');
  t.equal(restrictions.body.data.length, 0, 'the host failed, not the address: no restriction');
});

// CONTRACT §2: /metrics on the HTTP port. What an operator watches: sends accepted and refused,
// what became of their recipients, each delivery's outcome, the queue.
t.test('/metrics counts sends accepted and refused, recipients by result, delivery outcomes and the queue', async (t) => {
  const w = await startWorld(t, { script: { reject: (rcpt) => rcpt.startsWith('gone') } });
  const sample = async (): Promise<Map<string, number>> => {
    const text = (await w.ts.api('GET', '/metrics', { key: null, slug: null })).text;
    return new Map([...text.matchAll(/^(estafeta_[a-z_]+(?:\{[^}]*\})?) (\S+)$/gm)].map((m) => [m[1], Number(m[2])]));
  };
  const sent = await w.send(['ana@example.test', 'gone@example.test']);
  await waitFor(() => sent.mailIds.every((id) => [3, 6].includes(mailState(w.ts.svc, id).status)), { what: 'both final' });
  t.equal((await w.ts.api('POST', '/v1/mails/send', { body: { sender_email: `sandbox@${w.slug}.sandbox.test`, to: [{ email: `a@${w.slug}.sandbox.test` }], subject: 's', html: '<p>h</p>' } })).status, 200);
  t.equal((await w.ts.api('POST', '/v1/mails/send', { body: { sender_email: 'nobody@brand.test', to: [{ email: 'a@example.test' }], subject: 's', html: '<p>h</p>' } })).status, 404);
  const m = await sample();
  t.equal(m.get('estafeta_accepted_messages_total{door="http"}'), 2);
  t.equal(m.get('estafeta_accepted_recipients_total{door="http",result="queued"}'), 2);
  t.equal(m.get('estafeta_accepted_recipients_total{door="http",result="captured"}'), 1);
  t.equal(m.get('estafeta_refused_sends_total{door="http",code="sender_not_found"}'), 1);
  t.equal((await w.ts.api('POST', '/v1/mails/send', { body: { sender_email: 'news@brand.test', to: [{ email: 'not an address' }], subject: 's', html: '<p>h</p>' } })).status, 422);
  t.equal((await sample()).get('estafeta_refused_sends_total{door="http",code="validation_error"}'), 1, 'a format refusal of the door counts too');
  t.equal(m.get('estafeta_delivery_outcomes_total{outcome="sent"}'), 1);
  t.equal(m.get('estafeta_delivery_outcomes_total{outcome="bounced"}'), 1);
  t.equal(m.get('estafeta_queue_messages'), 0, 'nothing left to deliver');
});

// RFC 5321 §4.5.3.1.6: a line is at most 1000 octets with its CRLF; a strict MX refuses more.
// A legacy client's 100,000-octet line (or NUL) is carried in base64, content unchanged.
t.test('a submitted part with lines SMTP cannot carry leaves in base64, the same content, signed', async (t) => {
  const w = await startWorld(t);
  const key = (await w.ts.cli('apikey', 'create', w.slug, '--json')).json.api_key as string;
  const c = await smtpConnect(t, w.ts.svc.ports.smtp as number);
  t.equal(await c.login(w.slug, key), null);
  const long = 'x'.repeat(100_000);
  const plain = `From: news@brand.test\r\nTo: ana@example.test\r\nSubject: long\r\n\r\n${long}\r\nnul\0here\r\n`;
  const multi = ['From: news@brand.test', 'To: bo@example.test', 'Subject: parts', 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b"', '',
    '--b', 'Content-Type: text/plain; charset=utf-8', '', 'short and fine', '--b', 'Content-Type: text/csv', 'Content-Disposition: attachment; filename="a.csv"', '', `${'y'.repeat(2000)},z`, '--b--', ''].join('\r\n');
  t.equal((await c.send('news@brand.test', ['ana@example.test'], plain)).err, null);
  t.equal((await c.send('news@brand.test', ['bo@example.test'], multi)).err, null);
  const got = await waitFor(() => (w.sink.received.length >= 2 ? w.sink.received : undefined), { what: 'both at the MX' });
  for (const m of got ?? []) {
    const longest = Math.max(...m.raw.toString('latin1').split('\r\n').map((l) => l.length));
    t.ok(longest <= 998, `${m.to}: every line within 998 octets (longest ${longest})`);
    t.notOk(m.raw.includes(0), `${m.to}: no NUL on the wire`);
    const result = await dkimVerify(m.raw, { resolver: w.txtResolver });
    t.equal(result.results[0]?.status.result, 'pass', `${m.to}: signed after the re-encoding`);
  }
  const ana = await simpleParser(got?.find((m) => m.to.includes('ana@example.test'))?.raw ?? Buffer.alloc(0));
  t.equal(ana.text, `${long}\nnul\0here\n`, 'the text is what the client wrote');
  const bo = await simpleParser(got?.find((m) => m.to.includes('bo@example.test'))?.raw ?? Buffer.alloc(0));
  t.equal(bo.text?.trim(), 'short and fine', 'a part that could travel is kept');
  t.equal(bo.attachments[0]?.content.toString(), `${'y'.repeat(2000)},z`, 'the attachment is byte for byte');
  const boRaw = got?.find((m) => m.to.includes('bo@example.test'))?.raw.toString('latin1') ?? '';
  t.match(boRaw, /\r\n\r\nshort and fine\r\n--b/, 'the short part is left as written');
});

t.test('a mail accepted before its domain was deleted is still signed when it leaves (CONTRACT §5: every delivered message)', async (t) => {
  const w = await startWorld(t, { script: { failFirst: 1 }, env: { ESTAFETA_RETRY_DELAYS: '6' } });
  const q = await w.send(['ana@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 5, { what: 'deferred' });
  t.equal((await w.ts.cli('domain', 'delete', w.slug, 'brand.test', '--json')).code, 0);
  t.same([mailState(w.ts.svc, q.mailIds[0]).status, w.sink.received.length], [5, 0], 'the domain was deleted before the retry (the case under test)');
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent after the retry', timeoutMs: 15_000 });
  const result = await dkimVerify(w.sink.received[0].raw, { resolver: w.txtResolver });
  t.same([result.results[0]?.status.result, result.results[0]?.signingDomain], ['pass', 'brand.test'], 'signed with the domain\'s key');
});
