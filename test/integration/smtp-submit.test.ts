import t from 'tap';
import nodemailer from 'nodemailer';
import net from 'node:net';
import { startTestService, waitFor, type TapLike, type TestService } from '../helpers/service';
import { lineClient, smtpConnect, type Client } from '../helpers/smtp-client';
import { messageBytes } from '../helpers/spool-files';

const queued = /^250 2\.0\.0 Ok: queued as (\S+)$/;

async function session(t: TapLike, s: TestService): Promise<{ slug: string; from: string; rcpt: (local: string) => string; c: Client }> {
  const { slug, key } = await s.tenant();
  const c = await smtpConnect(t, s.svc.ports.smtp as number);
  const err = await c.login(slug, key);
  if (err) throw err;
  return { slug, from: `sandbox@${slug}.sandbox.test`, rcpt: (local) => `${local}@${slug}.sandbox.test`, c };
}

const message = (from: string, to: string, subject: string, extra = ''): string =>
  `From: Sandbox <${from}>\r\nTo: <${to}>\r\nSubject: ${subject}\r\n${extra}MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nhello\r\n`;

t.test('a message from the sandbox sender is queued, named in the 250 reply and listed by GET /v1/mails', async (t) => {
  const s = await startTestService(t);
  // Paused so the spool file stays to be read: the sandbox capture would finish and remove it.
  await s.svc.delivery.stop();
  const { slug, key } = await s.tenant();
  const from = `sandbox@${slug}.sandbox.test`;
  const transport = nodemailer.createTransport({
    host: '127.0.0.1', port: s.svc.ports.smtp, secure: false, requireTLS: true,
    tls: { rejectUnauthorized: false }, auth: { user: slug, pass: key },
  });
  t.teardown(() => transport.close());
  const info = await transport.sendMail({
    from: { name: 'Sandbox', address: from },
    to: `x@${slug}.sandbox.test`,
    cc: `y@${slug}.sandbox.test`,
    bcc: `hidden@${slug}.sandbox.test`,
    subject: 'Hello over SMTP',
    text: 'plain body',
    html: '<p>html body</p>',
    headers: {
      'X-Svc-Custom-Msg-Id': 'order-42',
      'X-Svc-Group-Code': 'campaign-7',
      'X-Svc-Category': 'Réunion Mensuelle',
      'X-Svc-Test-Mode': 'true',
      'X-Svc-Unknown': 'also removed',
      'X-Client-Header': 'kept',
    },
  });
  const m = queued.exec(info.response);
  t.ok(m, `reply names the message: ${info.response}`);
  const msgId = m?.[1] as string;
  t.same([...info.accepted].sort(), [`hidden@${slug}.sandbox.test`, `x@${slug}.sandbox.test`, `y@${slug}.sandbox.test`]);

  const list = await s.api('GET', `/v1/mails?msg_id=${encodeURIComponent(msgId)}`);
  t.equal(list.status, 200);
  const mails: Array<Record<string, unknown>> = list.body.data;
  t.same(mails.map((x) => x.to).sort(), [`hidden@${slug}.sandbox.test`, `x@${slug}.sandbox.test`, `y@${slug}.sandbox.test`], 'one mail per envelope recipient');
  for (const mail of mails) {
    t.equal(mail.msg_id, msgId);
    t.equal(mail.subject, 'Hello over SMTP');
    t.equal(mail.sender, from);
    t.equal(mail.custom_msg_id, 'order-42', 'X-Svc-Custom-Msg-Id mapped');
    t.equal(mail.custom_group_code, 'campaign-7', 'X-Svc-Group-Code mapped');
  }
  const logs = await s.api('GET', `/v1/mails/${String(mails[0].mail_id)}/logs`);
  t.match(JSON.stringify(logs.body), /accepted over smtp \(test mode\)/, 'X-Svc-Test-Mode mapped');
  const row = s.svc.db.prepare('SELECT category, test_mode, door, attachment_bytes FROM messages WHERE msg_id = ?').get(msgId);
  t.same(row, { category: 'reunion-mensuelle', test_mode: 1, door: 'smtp', attachment_bytes: 0 }, 'X-Svc-Category mapped to its slug');
  const byCustom = await s.api('GET', '/v1/mails?custom_msg_id=order-42');
  t.equal(byCustom.body.data.length, 3, 'findable by custom_msg_id');

  const spooled = await messageBytes(s.dataDir, s.svc.db, msgId);
  const head = spooled.subarray(0, spooled.indexOf('\r\n\r\n')).toString('latin1');
  t.notMatch(head, /^x-svc-/im, 'every X-Svc-* header stripped');
  t.notMatch(head, /^bcc:/im, 'Bcc stripped');
  t.notMatch(spooled.toString('latin1'), /hidden@/, 'the Bcc address appears nowhere');
  t.match(head, /^X-Client-Header: kept$/m, 'other headers kept');
  t.match(head, /^Cc: y@/m);
  t.match(spooled.toString('latin1'), /<p>html body<\/p>/, 'client body kept');
});

t.test('folded X-Svc-* headers are removed with their continuation lines', async (t) => {
  const s = await startTestService(t);
  await s.svc.delivery.stop(); // keeps the spool file (see above)
  const { from, rcpt, c } = await session(t, s);
  const raw = message(from, rcpt('x'), 'Folded', 'X-Svc-Custom-Msg-Id:\r\n  folded-id\r\nX-Keep: one\r\n\ttwo\r\nBcc: a@b.test,\r\n c@d.test\r\n');
  const { err, info } = await c.send(from, [rcpt('x')], raw);
  t.equal(err, null);
  const msgId = queued.exec(info?.response ?? '')?.[1] as string;
  t.ok(msgId);
  const spooled = (await messageBytes(s.dataDir, s.svc.db, msgId)).toString('latin1');
  t.notMatch(spooled, /folded-id|X-Svc|c@d\.test|Bcc:/i);
  t.match(spooled, /X-Keep: one\r\n\ttwo\r\n/, 'a kept folded header is byte-identical');
  t.match(spooled, /\r\n\r\nhello\r\n$/, 'body unchanged');
  const list = await s.api('GET', `/v1/mails?msg_id=${msgId}`);
  t.equal(list.body.data[0].custom_msg_id, 'folded-id', 'unfolded value mapped');
});

t.test('Resent-Bcc goes like Bcc; a bare-LF message still gets its Date and Message-ID in its header', async (t) => {
  const s = await startTestService(t);
  await s.svc.delivery.stop(); // keeps the spool file (see above)
  const { from, rcpt, c } = await session(t, s);
  const resent = await c.send(from, [rcpt('x')], message(from, rcpt('x'), 'Resent', 'Resent-Bcc: secret@example.test\r\n'));
  const spooled = (await messageBytes(s.dataDir, s.svc.db, queued.exec(resent.info?.response ?? '')?.[1] as string)).toString('latin1');
  t.notMatch(spooled, /secret@example\.test|Resent-Bcc/i);
  // The body's lines look like fields: only the header section decides what is missing.
  const lf = `From: ${from}\nTo: ${rcpt('x')}\nSubject: bare lf\n\nline one\nDate: not a header\nMessage-ID: <no@no>\n`;
  const r = await c.send(from, [rcpt('x')], lf);
  const msgId = queued.exec(r.info?.response ?? '')?.[1] as string;
  t.ok(msgId, r.err?.message ?? 'accepted');
  const bytes = (await messageBytes(s.dataDir, s.svc.db, msgId)).toString('latin1');
  const head = bytes.slice(0, bytes.search(/\r?\n\r?\n/));
  t.match(head, new RegExp(`^Message-ID: <${msgId}@`, 'm'), 'Message-ID added to the header');
  t.match(head, /^Date: \w{3}, \d{2} \w{3} \d{4} /m, 'Date added to the header');
});

t.test('the From header is one field naming one mailbox: a second author is 554 5.6.0', async (t) => {
  const s = await startTestService(t);
  const { from, rcpt, c } = await session(t, s);
  for (const [name, head] of [
    ['two From fields', `From: boss@bank.example\r\nFrom: ${from}\r\n`],
    ['two mailboxes', `From: ${from}, other@example.com\r\nSender: ${from}\r\n`],
  ]) {
    const r = await c.send(from, [rcpt('x')], `${head}To: ${rcpt('x')}\r\nSubject: two authors\r\n\r\nhi\r\n`);
    t.equal(r.err?.responseCode, 554, name);
    t.match(r.err?.response, /^554 5\.6\.0 validation_error /, name);
  }
  t.match((await c.send(from, [rcpt('x')], message(from, rcpt('x'), 'One author'))).info?.response, queued);
});

t.test('one Subject field: a second one would carry a subject over 254 characters past the measure', async (t) => {
  const s = await startTestService(t);
  const { from, rcpt, c } = await session(t, s);
  for (const order of [['L'.repeat(300), 'short'], ['short', 'L'.repeat(300)]]) {
    const r = await c.send(from, [rcpt('x')], `From: ${from}\r\nTo: ${rcpt('x')}\r\nSubject: ${order[0]}\r\nSubject: ${order[1]}\r\n\r\nhi\r\n`);
    t.match(r.err?.response, /^554 5\.6\.0 validation_error /, `the long one ${order[0].length > 5 ? 'first' : 'last'}`);
  }
  // The other fields RFC 5322 §3.6 allows once: receivers refuse a message repeating them.
  for (const field of ['Date: Fri, 27 Nov 2026 10:00:00 +0000', 'Message-ID: <a@b.test>', `To: ${rcpt('y')}`, 'Reply-To: r@b.test', 'In-Reply-To: <p@b.test>']) {
    const twice = `From: ${from}\r\nTo: ${rcpt('x')}\r\nSubject: s\r\n${field}\r\n${field.replace(/^To:/, 'to:')}\r\n\r\nhi\r\n`;
    const text = field.startsWith('To:') ? twice.replace(`To: ${rcpt('x')}\r\n`, '') : twice;
    const r = await c.send(from, [rcpt('x')], text);
    t.match(r.err?.response, /^554 5\.6\.0 validation_error .*at most one/, `two ${field.split(':')[0]} fields`);
  }
  t.equal((await s.api('GET', '/v1/mails')).body.data.length, 0, 'nothing stored');
  t.match((await c.send(from, [rcpt('x')], `From: ${from}\r\nTo: ${rcpt('x')}\r\nSubject: s\r\nDate: Fri, 27 Nov 2026 10:00:00 +0000\r\nMessage-ID: <a@b.test>\r\n\r\nhi\r\n`)).info?.response, queued, 'one of each is accepted');
});

t.test('the checks read the lines the recipient gets: a lone CR is a line break, a group in From is refused', async (t) => {
  const s = await startTestService(t);
  const { slug, key } = await s.tenant();
  const from = `sandbox@${slug}.sandbox.test`;
  const to = `x@${slug}.sandbox.test`;
  // The exact bytes, on a bare socket: a client library would rewrite the lone CR itself.
  const c = await lineClient(t, s.svc.ports.smtp as number);
  await c.cmd('EHLO client.test');
  await c.starttls();
  await c.cmd('EHLO client.test');
  t.match(await c.cmd(`AUTH PLAIN ${Buffer.from(`\0${slug}\0${key}`).toString('base64')}`), /^235/);
  const attempt = async (head: string): Promise<string> => {
    t.match(await c.cmd(`MAIL FROM:<${from}>`), /^250/);
    t.match(await c.cmd(`RCPT TO:<${to}>`), /^250/);
    t.match(await c.cmd('DATA'), /^354/);
    return c.cmd(`${head}To: <${to}>\r\nMIME-Version: 1.0\r\n\r\nhi\r\n.`);
  };
  const smuggled = await attempt(`From: <${from}>\r\nSubject: hello\rFrom: ceo@bank.example\r\n`);
  t.match(smuggled, /^554 5\.6\.0 validation_error /, 'a From hidden behind a lone CR is a second From');
  const group = await attempt(`From: Billing: billing@bank.example;, <${from}>\r\nSubject: group\r\n`);
  t.match(group, /^554 5\.6\.0 validation_error /, 'a group before the registered sender is another author');
  const onlyGroup = await attempt(`From: Billing: <${from}>;\r\nSubject: group\r\n`);
  t.match(onlyGroup, /^554 5\.6\.0 validation_error /, 'a group is not one mailbox');
  // Past the MIME parser's limits the content is refused for good, not "try again later".
  const parts = Array.from({ length: 1001 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join('');
  t.match(await c.cmd(`MAIL FROM:<${from}>`), /^250/);
  t.match(await c.cmd(`RCPT TO:<${to}>`), /^250/);
  t.match(await c.cmd('DATA'), /^354/);
  const tooMany = await c.cmd(`From: <${from}>\r\nTo: <${to}>\r\nSubject: parts\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${parts}--b--\r\n.`);
  t.match(tooMany, /^554 5\.6\.0 validation_error /, '1,001 MIME parts');
  // Bare LFs are made CRLF before anything reads the message, and the size limit holds for the
  // bytes that result: 8 MB of bare line ends is 16 MB of lines.
  t.match(await c.cmd(`MAIL FROM:<${from}>`), /^250/);
  t.match(await c.cmd(`RCPT TO:<${to}>`), /^250/);
  t.match(await c.cmd('DATA'), /^354/);
  t.match(await c.cmd(`From: <${from}>\nTo: <${to}>\nSubject: lf\n\n${'\n'.repeat(8 * 1024 * 1024)}\r\n.`), /^552 5\.3\.4 request_too_large /, 'past 15 MB once in CRLF');
  const fine = await attempt(`From: <${from}>\r\nSubject: fine\r\n`);
  t.match(fine, /^250 2\.0\.0 Ok: queued as /);
});

t.test('an unregistered From is 550 5.7.1 sender_not_found; a sandbox sender to the outside is 550 5.7.1', async (t) => {
  const s = await startTestService(t);
  const { slug, from, rcpt, c } = await session(t, s);
  const stranger = `nobody@${slug}.sandbox.test`;
  const r1 = await c.send(stranger, [rcpt('x')], message(stranger, rcpt('x'), 'Hi'));
  t.equal(r1.err?.responseCode, 550);
  t.match(r1.err?.response, /^550 5\.7\.1 sender_not_found /);
  const r2 = await c.send(from, ['someone@example.com'], message(from, 'someone@example.com', 'Hi'));
  t.equal(r2.err?.responseCode, 550);
  t.match(r2.err?.response, /^550 5\.7\.1 sandbox_relay_restricted /);
  const r3 = await c.send(from, [rcpt('x')], message(from, rcpt('x'), 'Hi'));
  t.match(r3.info?.response, queued, 'the session goes on after a refusal');
});

t.test('the 51st RCPT is 452 4.5.3 and the first 50 are accepted', async (t) => {
  const s = await startTestService(t);
  const { from, rcpt, c } = await session(t, s);
  const to = Array.from({ length: 51 }, (_, i) => rcpt(`r${i}`));
  const { err, info } = await c.send(from, to, message(from, to[0], 'Many'));
  t.equal(err, null);
  t.equal(info?.accepted.length, 50);
  t.same(info?.rejected, [to[50]]);
  t.equal(info?.rejectedErrors?.[0]?.responseCode, 452);
  t.match(info?.rejectedErrors?.[0]?.response, /^452 4\.5\.3 validation_error /);
  const msgId = queued.exec(info?.response ?? '')?.[1] as string;
  t.equal((await s.api('GET', `/v1/mails?msg_id=${msgId}&page_size=100`)).body.data.length, 50);
});

t.test('the limit counts RCPT commands, repeats included, as the HTTP door counts to + cc + bcc entries', async (t) => {
  const s = await startTestService(t);
  const { from, rcpt, c } = await session(t, s);
  const to = [...Array.from({ length: 49 }, (_, i) => rcpt(`r${i}`)), rcpt('R0'), rcpt('r1')];
  const { err, info } = await c.send(from, to, message(from, to[0], 'Repeats'));
  t.equal(err, null);
  t.equal(info?.rejectedErrors?.length, 1, 'the 51st RCPT is refused');
  t.match(info?.rejectedErrors?.[0]?.response, /^452 4\.5\.3 validation_error /);
  const msgId = queued.exec(info?.response ?? '')?.[1] as string;
  t.equal((await s.api('GET', `/v1/mails?msg_id=${msgId}&page_size=100`)).body.data.length, 49, 'the repeat still makes no second mail');
  const http = await s.api('POST', '/v1/mails/send', { body: { sender_email: from, to: to.map((email) => ({ email })), subject: 's', html: 'x' } });
  t.equal(http.status, 422, 'the same 51 recipients over HTTP');
});

t.test('a recipient repeated in another case is one mail, stored with its first spelling, as over HTTP', async (t) => {
  const s = await startTestService(t);
  const { from, rcpt, c } = await session(t, s);
  const { err, info } = await c.send(from, [rcpt('Ana'), rcpt('ana'), rcpt('ANA'), rcpt('bo')], message(from, rcpt('Ana'), 'Twice'));
  t.equal(err, null);
  const msgId = queued.exec(info?.response ?? '')?.[1] as string;
  const smtp = (await s.api('GET', `/v1/mails?msg_id=${msgId}`)).body.data.map((m: { to: string }) => m.to).sort();
  t.same(smtp, [rcpt('Ana'), rcpt('bo')], 'the first spelling kept');
  const http = await s.api('POST', '/v1/mails/send', { body: { sender_email: from, to: [{ email: rcpt('Ana') }, { email: rcpt('ana') }, { email: rcpt('bo') }], subject: 's', html: 'x' } });
  const viaHttp = (await s.api('GET', `/v1/mails?msg_id=${http.body.message_id}`)).body.data.map((m: { to: string }) => m.to).sort();
  t.same(viaHttp, smtp, 'the same mails as the HTTP door stores');
});

// RFC 6531 §3.3: an SMTPUTF8 address is UTF-8. Bytes that are not reached the store as U+FFFD
// and the mail went to an address the client never wrote.
t.test('an address whose bytes are not UTF-8 is 553 5.1.3; the session goes on', async (t) => {
  const s = await startTestService(t, { ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'true' });
  const { slug, key } = await s.tenant();
  const socket = net.connect(s.svc.ports.smtp as number, '127.0.0.1');
  t.teardown(() => socket.destroy());
  let got = '';
  socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
  const reply = async (bytes: Buffer | string): Promise<string> => {
    got = '';
    socket.write(bytes);
    await waitFor(() => /(^|\r\n)\d{3} [^\r\n]*\r\n$/.test(got), { what: `a reply to ${String(bytes).trim()}` });
    return got.trim().split('\r\n').pop() ?? '';
  };
  await waitFor(() => got.startsWith('220 '), { what: 'greeting' });
  await reply('EHLO x\r\n');
  t.match(await reply(`AUTH PLAIN ${Buffer.from(`\0${slug}\0${key}`).toString('base64')}\r\n`), /^235 /);
  t.match(await reply(Buffer.concat([Buffer.from('MAIL FROM:<'), Buffer.from([0xff, 0xfe]), Buffer.from(`@${slug}.sandbox.test> SMTPUTF8\r\n`)])), /^553 5\.1\.3 validation_error /, 'MAIL FROM');
  t.match(await reply(`MAIL FROM:<sandbox@${slug}.sandbox.test> SMTPUTF8\r\n`), /^250 /);
  t.match(await reply(Buffer.concat([Buffer.from('RCPT TO:<'), Buffer.from([0xff, 0xfe]), Buffer.from(`@${slug}.sandbox.test>\r\n`)])), /^553 5\.1\.3 validation_error /, 'RCPT TO');
  t.match(await reply(Buffer.from(`RCPT TO:<ñandú@${slug}.sandbox.test>\r\n`, 'utf8')), /^250 /, 'a UTF-8 local part is fine');
  // RFC 6531 §3.4: only in a transaction that declared SMTPUTF8 (Postfix: 553 5.6.7).
  t.match(await reply('RSET\r\n'), /^250 /);
  t.match(await reply(`MAIL FROM:<sandbox@${slug}.sandbox.test>\r\n`), /^250 /);
  t.match(await reply(Buffer.from(`RCPT TO:<ñandú@${slug}.sandbox.test>\r\n`, 'utf8')), /^553 5\.6\.7 validation_error /, 'a UTF-8 recipient without SMTPUTF8');
  t.match(await reply('RSET\r\n'), /^250 /);
  t.match(await reply(Buffer.from(`MAIL FROM:<josé@${slug}.sandbox.test>\r\n`, 'utf8')), /^553 5\.6\.7 validation_error /, 'a UTF-8 sender without SMTPUTF8');
  t.match(await reply('QUIT\r\n'), /^221 /);
});

t.test('a message over 15 MB is 552 5.3.4 without a SIZE declaration, and the session goes on', async (t) => {
  const s = await startTestService(t);
  const { from, rcpt, c } = await session(t, s);
  const line = `${'a'.repeat(998)}\r\n`;
  const big = message(from, rcpt('x'), 'Big').replace('hello\r\n', line.repeat(Math.ceil(15728640 / line.length) + 10));
  t.ok(Buffer.byteLength(big) > 15728640);
  const r1 = await c.send(from, [rcpt('x')], big);
  t.equal(r1.err?.responseCode, 552);
  t.match(r1.err?.response, /^552 5\.3\.4 request_too_large /);
  const r2 = await c.send(from, [rcpt('x')], message(from, rcpt('x'), 'Small'));
  t.match(r2.info?.response, queued);
  // The limit is the client's message: exactly 15 MB without Date and Message-ID is accepted,
  // though the stored copy gains the two headers the platform adds.
  const exactly = (size: number): string => {
    const head = message(from, rcpt('x'), 'Exact').replace('hello\r\n', '');
    const body = line.repeat(Math.floor((size - head.length) / line.length));
    const rest = size - head.length - body.length;
    return head + body + (rest >= 2 ? `${'b'.repeat(rest - 2)}\r\n` : '');
  };
  const limit = exactly(15728640);
  t.equal(Buffer.byteLength(limit), 15728640);
  t.notMatch(limit.slice(0, 400), /^(Date|Message-ID):/im);
  t.match((await c.send(from, [rcpt('x')], limit)).info?.response, queued, '15728640 bytes: accepted');
  const over = exactly(15728641);
  t.equal(Buffer.byteLength(over), 15728641);
  t.equal((await c.send(from, [rcpt('x')], over)).err?.responseCode, 552, 'one byte more: 552');
});

t.test('a message whose quoted-printable part holds a million spaces is read in one pass and kept as sent', async (t) => {
  const s = await startTestService(t);
  await s.svc.delivery.stop(); // keeps the spool file (see above)
  const { from, rcpt, c } = await session(t, s);
  const spaces = ' '.repeat(1_000_000);
  const raw = `From: ${from}\r\nTo: ${rcpt('x')}\r\nSubject: spaces\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n`
    + `--b\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nhello=\r\n${spaces}x\r\n`
    + '--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="a.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\nAAEC\r\n--b--\r\n';
  const r = await c.send(from, [rcpt('x')], raw);
  t.match(r.info?.response, queued, 'accepted (mailparser alone would decode that part for hours)');
  const spooled = await messageBytes(s.dataDir, s.svc.db, queued.exec(r.info?.response ?? '')?.[1] as string);
  t.ok(spooled.includes(Buffer.from(`hello=\r\n${spaces}x\r\n`)), 'the stored message keeps the client\'s bytes');
});

t.test('a subject over 254 characters is 554 5.6.0; 254 is accepted', async (t) => {
  const s = await startTestService(t);
  const { from, rcpt, c } = await session(t, s);
  const r1 = await c.send(from, [rcpt('x')], message(from, rcpt('x'), 's'.repeat(255)));
  t.equal(r1.err?.responseCode, 554);
  t.match(r1.err?.response, /^554 5\.6\.0 validation_error .*\/subject/);
  const r2 = await c.send(from, [rcpt('x')], message(from, rcpt('x'), 's'.repeat(254)));
  t.match(r2.info?.response, queued);
});

t.test('a key disabled mid-session stops the next message', async (t) => {
  const s = await startTestService(t);
  const { slug, from, rcpt, c } = await session(t, s);
  t.match((await c.send(from, [rcpt('x')], message(from, rcpt('x'), 'One'))).info?.response, queued);
  t.equal((await s.cli('instance', 'disable', slug, '--json')).code, 0);
  const r = await c.send(from, [rcpt('x')], message(from, rcpt('x'), 'Two'));
  t.match(r.err?.response, /^535 5\.7\.8 forbidden /);
  t.equal(r.err?.command, 'MAIL FROM', 'refused at MAIL, before recipients and data');
});

t.test('a key revoked mid-session fails the next MAIL with 535 5.7.8', async (t) => {
  const s = await startTestService(t, { ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'true' });
  const { slug } = await s.tenant();
  const k = await s.cli('apikey', 'create', slug, '--json');
  const c = await lineClient(t, s.svc.ports.smtp as number);
  await c.cmd('EHLO client.test');
  t.match(await c.cmd(`AUTH PLAIN ${Buffer.from(`\0${slug}\0${k.json.api_key as string}`).toString('base64')}`), /^235 /);
  const from = `sandbox@${slug}.sandbox.test`;
  t.match(await c.cmd(`MAIL FROM:<${from}>`), /^250 /);
  t.match(await c.cmd('RSET'), /^250 /);
  t.equal((await s.cli('apikey', 'revoke', slug, k.json.key_id as string, '--json')).code, 0);
  t.match(await c.cmd(`MAIL FROM:<${from}>`), /^535 5\.7\.8 unauthorized /);
  t.match(await c.cmd(`RCPT TO:<x@${slug}.sandbox.test>`), /^503 /, 'no transaction was opened');
});

t.test('attachments over the functional limit are accepted and the mails end dropped', async (t) => {
  const s = await startTestService(t);
  const { slug, from, rcpt, c } = await session(t, s);
  t.equal((await s.cli('instance', 'limits', slug, '--attachment-max-bytes', '1000', '--json')).code, 0);
  const boundary = 'b1';
  const attachment = Buffer.alloc(3000, 7).toString('base64').replace(/.{76}/g, '$&\r\n');
  const raw = `From: ${from}\r\nTo: ${rcpt('x')}\r\nSubject: With file\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=${boundary}\r\n\r\n`
    + `--${boundary}\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n`
    + `--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=data.bin\r\nContent-Transfer-Encoding: base64\r\n\r\n${attachment}\r\n--${boundary}--\r\n`;
  const { err, info } = await c.send(from, [rcpt('x')], raw);
  t.equal(err, null);
  const msgId = queued.exec(info?.response ?? '')?.[1] as string;
  t.ok(msgId, 'accepted');
  const row = s.svc.db.prepare('SELECT attachment_bytes FROM messages WHERE msg_id = ?').get(msgId);
  t.same(row, { attachment_bytes: 3000 }, 'decoded attachment size measured by the parser');
  const list = await s.api('GET', `/v1/mails?msg_id=${msgId}`);
  t.equal(list.body.data[0].status, 4, 'dropped');
});

t.test('attachments over the technical limits end dropped too, whatever the functional limit (spec, rule 7)', async (t) => {
  const s = await startTestService(t);
  const { slug, from, rcpt, c } = await session(t, s);
  t.equal((await s.cli('instance', 'limits', slug, '--attachment-max-bytes', String(30 * 1024 * 1024), '--json')).code, 0);
  const boundary = 'b2';
  const part = (i: number) => `--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=f${i}.bin\r\nContent-Transfer-Encoding: base64\r\n\r\naGk=\r\n`;
  const raw = (n: number) => `From: ${from}\r\nTo: ${rcpt('x')}\r\nSubject: ${n} files\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=${boundary}\r\n\r\n`
    + Array.from({ length: n }, (_, i) => part(i)).join('') + `--${boundary}--\r\n`;
  const status = async (n: number): Promise<{ status: number; log: string }> => {
    const { info } = await c.send(from, [rcpt('x')], raw(n));
    const msgId = queued.exec(info?.response ?? '')?.[1] as string;
    const mail = (await s.api('GET', `/v1/mails?msg_id=${msgId}`)).body.data[0];
    const logs = await s.api('GET', `/v1/mails/${mail.mail_id}/logs`);
    return { status: mail.status, log: JSON.stringify(logs.body.data) };
  };
  t.not((await status(20)).status, 4, '20 attachments are delivered');
  const over = await status(21);
  t.equal(over.status, 4, '21 attachments: dropped');
  t.match(over.log, /technical limits of 20 attachments/, 'the log says why');
});

t.test('plan, subscription and bandwidth refusals speak their CONTRACT §6 replies', async (t) => {
  const s = await startTestService(t);
  const { slug, from, rcpt, c } = await session(t, s);
  const body = (subject: string): string => message(from, rcpt('x'), subject, `X-Pad: ${'p'.repeat(600)}\r\n`);

  t.equal((await s.cli('instance', 'limits', slug, '--subscription', 'inactive', '--json')).code, 0);
  const inactive = await c.send(from, [rcpt('x')], body('a'));
  t.match(inactive.err?.response, /^550 5\.7\.0 subscription_inactive /);
  t.equal((await s.cli('instance', 'limits', slug, '--subscription', 'active', '--send-limit', '1', '--json')).code, 0);
  t.match((await c.send(from, [rcpt('x')], body('b'))).info?.response, queued, 'within the plan');
  const plan = await c.send(from, [rcpt('x')], body('c'));
  t.match(plan.err?.response, /^550 5\.7\.0 plan_send_limit_exceeded /);

  t.equal((await s.cli('instance', 'limits', slug, '--send-limit', 'none', '--bandwidth-bytes-per-second', '1', '--bandwidth-burst-bytes', '1500', '--json')).code, 0);
  t.match((await c.send(from, [rcpt('x')], body('d'))).info?.response, queued, 'within the burst');
  const rate = await c.send(from, [rcpt('x')], body('e'));
  t.equal(rate.err?.responseCode, 451, 'temporary');
  t.match(rate.err?.response, /^451 4\.7\.0 rate_limit_exceeded /);
});
