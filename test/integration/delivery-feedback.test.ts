import t from 'tap';
import nodemailer from 'nodemailer';
import { simpleParser } from 'mailparser';
import { startWorld, mailState, mailLogs, type World } from '../helpers/delivery-world';
import { waitFor } from '../helpers/service';
import { lineClient } from '../helpers/smtp-client';

const onList = (db: { prepare(s: string): { get(...a: unknown[]): unknown } }, rcpt: string, list: string): boolean =>
  Boolean(db.prepare('SELECT 1 FROM suppressions WHERE recipient = ? AND list = ?').get(rcpt, list));

t.test('a pixel fetch and a click are counted, the click redirects only to the signed URL, and one-click unsubscribe suppresses the recipient', async (t) => {
  const w = await startWorld(t);
  const q = await w.send(['ana@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent' });
  const parsed = await simpleParser(w.sink.received[0].raw);
  const html = String(parsed.html);
  const pixel = /src="([^"]+\/t\/o\/[^"]+)"/.exec(html)?.[1] ?? '';
  const click = (/href="([^"]+\/t\/c\/[^"]+)"/.exec(html)?.[1] ?? '').replace(/&amp;/g, '&');
  const unsub = /<(http[^>]+\/t\/u\/[^>]+)>/.exec(w.sink.received[0].raw.toString())?.[1] ?? '';
  t.ok(pixel.startsWith(w.ts.svc.config.publicUrl) && click.startsWith(w.ts.svc.config.publicUrl), 'links live under ESTAFETA_PUBLIC_URL');
  // The configured public URL names port 0 (bound at start): reach the same paths on the real port.
  const local = (u: string): string => w.ts.url + u.slice(w.ts.svc.config.publicUrl.length);

  const img = await fetch(local(pixel));
  t.equal(img.status, 200);
  t.equal(img.headers.get('content-type'), 'image/gif');
  const go = await fetch(local(click), { redirect: 'manual' });
  t.equal(go.status, 302);
  t.equal(go.headers.get('location'), 'https://example.org/a?x=1&y=2', 'redirects to the original URL');
  const forged = await fetch(local(click).replace(/u=[^&]+/, `u=${encodeURIComponent('https://evil.test/')}`), { redirect: 'manual' });
  t.equal(forged.status, 404, 'a URL not signed for this mail is not redirected to');
  t.equal(((await forged.json()) as { code: string }).code, 'link_not_found', 'the route exists: not the generic not_found');
  await fetch(local(pixel));
  const st = mailState(w.ts.svc, q.mailIds[0]);
  t.equal(st.opens, 2);
  t.equal(st.clicks, 1);

  const none = await w.ts.api('GET', '/v1/activities/opens');
  t.equal(none.status, 200);
  t.equal(none.body.data.length, 2, 'one record per open');
  t.equal(none.body.pagination.total_items, 2);
  t.match(none.body.data[0], { mail_id: q.mailIds[0], msg_id: q.msgId, to: 'ana@example.test', sender: 'news@brand.test', opened_at: /Z$/, sent_at: /Z$/ });
  const byMail = await w.ts.api('GET', '/v1/activities/opens?group_by=mail_id');
  t.same(byMail.body.data.map((r: { mail_id: string; open_count: number }) => [r.mail_id, r.open_count]), [[q.mailIds[0], 2]]);
  t.equal(byMail.body.pagination.total_items, null, 'grouped lists carry no total');
  const byMsg = await w.ts.api('GET', '/v1/activities/opens?group_by=msg_id');
  t.match(byMsg.body.data[0], { msg_id: q.msgId, open_count: 2, recipients_opened: 1, rcpt_count: 1, subject: 'Hello' });
  const bad = await w.ts.api('GET', '/v1/activities/opens?group_by=day');
  t.equal(bad.status, 422, 'a group_by the enum does not list');
  const opened = await w.ts.api('GET', '/v1/mails?opened=opened');
  t.same(opened.body.data?.map((m: { mail_id: string }) => m.mail_id), [q.mailIds[0]], 'the opened filter of the mail list sees the open');

  const page = await fetch(local(unsub));
  t.equal(page.status, 200, 'GET shows a confirmation page');
  t.notOk(onList(w.ts.svc.db, 'ana@example.test', 'unsubscribes'), 'GET alone does not unsubscribe');
  for (const method of ['PUT', 'DELETE']) {
    const other = await fetch(local(unsub), { method });
    const allow = (other.headers.get('allow') ?? '').split(/,\s*/).sort();
    t.same([other.status, allow], [405, ['GET', 'HEAD', 'POST']], `${method}: the path exists, the verb is not accepted (spec, Errors)`);
  }
  t.notOk(onList(w.ts.svc.db, 'ana@example.test', 'unsubscribes'), 'nor does another verb');
  const post = await fetch(local(unsub), { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
  t.equal(post.status, 200);
  t.ok(onList(w.ts.svc.db, 'ana@example.test', 'unsubscribes'), 'one-click POST unsubscribes');
  const q2 = await w.send(['ana@example.test']);
  await waitFor(() => mailState(w.ts.svc, q2.mailIds[0]).status === 4, { what: 'next mail dropped' });
});

async function sendToMx(port: number, from: string, to: string, raw: string): Promise<void> {
  const client = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, name: 'remote.test' });
  try {
    await client.sendMail({ envelope: { from, to: [to] }, raw });
  } finally {
    client.close();
  }
}

const dsn = (to: string, rcpt: string): string => [
  `From: MAILER-DAEMON@mx.example.test`, `To: ${to}`, 'Subject: Undelivered Mail', 'MIME-Version: 1.0',
  'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"', '', '--b1', 'Content-Type: text/plain', '',
  'The mail could not be delivered.', '--b1', 'Content-Type: message/delivery-status', '', 'Reporting-MTA: dns; mx.example.test', '',
  `Final-Recipient: rfc822; ${rcpt}`, 'Action: failed', 'Status: 5.1.1', 'Diagnostic-Code: smtp; 550 5.1.1 mailbox unavailable', '', '--b1--', '',
].join('\r\n');

/** The return path a mail was delivered with (signed VERP), as the sink saw it. */
const returnPathOf = (w: World, mailId: string): string => {
  const from = w.sink.received.find((m) => m.from.startsWith(`bounces+${mailId}.`))?.from;
  if (!from) throw new Error(`no delivery of ${mailId}`);
  return from;
};

const arf = (to: string, returnPath: string): string => [
  'From: fbl@isp.test', `To: ${to}`, 'Subject: FW: abuse report', 'MIME-Version: 1.0',
  'Content-Type: multipart/report; report-type=feedback-report; boundary="b2"', '', '--b2', 'Content-Type: text/plain', '', 'This is an abuse report.',
  '--b2', 'Content-Type: message/feedback-report', '', 'Feedback-Type: abuse', 'User-Agent: isp-fbl/1.0', 'Version: 1', '',
  '--b2', 'Content-Type: text/rfc822-headers', '', `Return-Path: <${returnPath}>`, 'From: news@brand.test', 'Subject: Hello', '', '--b2--', '',
].join('\r\n');

t.test('the inbound MX turns a DSN into a bounce and an ARF report into a complaint, and relays nothing else', async (t) => {
  const w = await startWorld(t);
  const q = await w.send(['ana@example.test', 'bo@example.test']);
  await waitFor(() => q.mailIds.every((id) => mailState(w.ts.svc, id).status === 3), { what: 'sent' });
  const mx = w.ts.svc.ports.mx ?? 0;
  const rp = returnPathOf(w, q.mailIds[0]);
  // The mail id alone is in every copy: without the signature it names nothing.
  const unsigned = await sendToMx(mx, '', `bounces+${q.mailIds[0]}@brand.test`, dsn('x', 'ana@example.test')).then(() => null, (e: { responseCode?: number }) => e);
  t.equal(unsigned?.responseCode, 550, 'an unsigned return path is refused');
  // A data dir upgraded after this mail was received (the cut-over is migration 130's time): the
  // mail went out unsigned, and its late bounce still names it.
  const cutover = w.ts.svc.db.prepare('SELECT applied_at FROM schema_migrations WHERE version = 130').pluck().get() as number;
  w.ts.svc.db.prepare('UPDATE schema_migrations SET applied_at = ? WHERE version = 130').run(Date.now() + 3_600_000);
  t.equal(await sendToMx(mx, '', `bounces+${q.mailIds[0]}@brand.test`, 'Subject: probe\r\n\r\nno report\r\n').then(() => 'accepted', () => 'refused'), 'accepted',
    'the unsigned return path of a mail from before the upgrade');
  w.ts.svc.db.prepare('UPDATE schema_migrations SET applied_at = ? WHERE version = 130').run(cutover);
  const forgedArf = arf('complaints@mta.estafeta.test', `bounces+${q.mailIds[1]}@brand.test`).replace('Subject: Hello', `List-Unsubscribe: <http://x/t/u/${q.mailIds[1]}/AAAAAAAAAAAAAAAAAAAAAA>`);
  await sendToMx(mx, 'fbl@isp.test', 'complaints@mta.estafeta.test', forgedArf);
  t.notOk(onList(w.ts.svc.db, 'bo@example.test', 'complaints'), 'an ARF naming a mail id without a signature adds no complaint');
  await sendToMx(mx, '', rp, dsn(rp, 'ana@example.test'));
  t.equal(mailState(w.ts.svc, q.mailIds[0]).status, 6, 'the DSN bounced the mail it names');
  t.match(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.response, /550 5\.1\.1 mailbox unavailable/);
  t.ok(onList(w.ts.svc.db, 'ana@example.test', 'restrictions'), 'and restricted the address');

  await sendToMx(mx, 'fbl@isp.test', 'complaints@mta.estafeta.test', arf('complaints@mta.estafeta.test', returnPathOf(w, q.mailIds[1])));
  t.ok(onList(w.ts.svc.db, 'bo@example.test', 'complaints'), 'the ARF report added a complaint');
  t.equal(mailState(w.ts.svc, q.mailIds[1]).status, 3, 'a complaint does not change the delivery status');

  const refusal = (p: Promise<void>): Promise<{ responseCode?: number; response?: string } | null> => p.then(() => null, (e: { responseCode?: number; response?: string }) => e);
  const relay = await refusal(sendToMx(mx, 'a@remote.test', 'someone@example.test', 'Subject: relay?\r\n\r\nhi\r\n'));
  t.equal(relay?.responseCode, 550, 'no open relay');
  t.match(relay?.response, /5\.1\.1/);
  const unknown = await refusal(sendToMx(mx, 'a@remote.test', 'bounces+nosuchmail@brand.test', 'Subject: x\r\n\r\nhi\r\n'));
  t.equal(unknown?.responseCode, 550, 'unknown return paths are refused');
  await sendToMx(mx, 'someone@remote.test', 'postmaster@mta.estafeta.test', 'Subject: hello postmaster\r\n\r\nhi\r\n');
  t.pass('postmaster@ the host accepts mail (RFC 5321 4.5.1)');
  await sendToMx(mx, 'fbl@isp.test', 'abuse@mta.estafeta.test', arf('abuse@mta.estafeta.test', returnPathOf(w, q.mailIds[0])));
  t.ok(onList(w.ts.svc.db, 'ana@example.test', 'complaints'), 'an ARF report to abuse@ counts as a complaint');

  // A return path is the mail's id at its sender's domain, nowhere else.
  const elsewhere = await refusal(sendToMx(mx, '', returnPathOf(w, q.mailIds[1]).replace('@brand.test', '@gmail.test'), dsn('x', 'bo@example.test')));
  t.equal(elsewhere?.responseCode, 550, 'a mail id at another domain is not a return path');
  t.equal(mailState(w.ts.svc, q.mailIds[1]).status, 3, 'and bounced nothing');
  // The role boxes every MX takes: a bare postmaster (RFC 5321 4.5.1), postmaster@/abuse@ at a
  // registered domain (whose MX points here), and the DMARC rua the domain records ask for.
  for (const to of ['postmaster', 'postmaster@brand.test', 'abuse@brand.test', 'dmarc@mta.estafeta.test']) {
    t.equal(await refusal(sendToMx(mx, 'someone@remote.test', to, 'Subject: hello\r\n\r\nhi\r\n')), null, `${to} accepted`);
  }
  t.equal((await refusal(sendToMx(mx, 'a@remote.test', 'postmaster@unregistered.test', 'Subject: x\r\n\r\nhi\r\n')))?.responseCode, 550, 'not at any domain');
  // A DMARC failure report (ARF auth-failure) is not the recipient complaining.
  const third = await w.send(['cy@example.test']);
  await waitFor(() => mailState(w.ts.svc, third.mailIds[0]).status === 3, { what: 'sent' });
  const authFailure = arf('dmarc@mta.estafeta.test', returnPathOf(w, third.mailIds[0])).replace('Feedback-Type: abuse', 'Feedback-Type: auth-failure');
  await sendToMx(mx, 'dmarc@isp.test', 'dmarc@mta.estafeta.test', authFailure);
  t.notOk(onList(w.ts.svc.db, 'cy@example.test', 'complaints'), 'an auth-failure report adds no complaint');
  const notSpam = arf('complaints@mta.estafeta.test', returnPathOf(w, third.mailIds[0])).replace('Feedback-Type: abuse', 'Feedback-Type: not-spam');
  await sendToMx(mx, 'fbl@isp.test', 'complaints@mta.estafeta.test', notSpam);
  t.notOk(onList(w.ts.svc.db, 'cy@example.test', 'complaints'), 'nor does a not-spam report (RFC 5965: the user wants the mail)');
  await sendToMx(mx, 'fbl@isp.test', 'complaints@mta.estafeta.test', arf('complaints@mta.estafeta.test', returnPathOf(w, third.mailIds[0])));
  t.ok(onList(w.ts.svc.db, 'cy@example.test', 'complaints'), 'while an abuse report about the same mail does');
});

t.test('a DSN bounces each mail by the block of its own recipient; report parts may be encoded; a complaint names one mail, once', async (t) => {
  const w = await startWorld(t);
  const q = await w.send(['ana@example.test', 'bo@example.test', 'cy@example.test', 'di@example.test']);
  await waitFor(() => q.mailIds.every((id) => mailState(w.ts.svc, id).status === 3), { what: 'sent' });
  const mx = w.ts.svc.ports.mx ?? 0;
  const [ana, bo, cy, di] = q.mailIds;
  const report = (to: string, statusPart: string, encoding?: string): string => [
    'From: MAILER-DAEMON@mx.example.test', `To: ${to}`, 'Subject: Delivery Status', 'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b3"', '', '--b3', 'Content-Type: text/plain', '', 'Report.',
    '--b3', ...(encoding ? [`Content-Transfer-Encoding: ${encoding}`] : []), 'Content-Type: message/delivery-status', '',
    encoding === 'base64' ? Buffer.from(statusPart).toString('base64') : statusPart, '--b3--', '',
  ].join('\r\n');
  const block = (rcpt: string, action: string, status: string, diagnostic: string) =>
    `Final-Recipient: rfc822; ${rcpt}\r\nAction: ${action}\r\nStatus: ${status}\r\nDiagnostic-Code: ${diagnostic}`;
  // One DSN to two return paths: ana's block is a delay, bo's a failure.
  const both = `Reporting-MTA: dns; mx.example.test\r\n\r\n${block('ana@example.test', 'delayed', '4.2.2', 'smtp; 452 4.2.2 mailbox full')}\r\n\r\n${block('bo@example.test', 'failed', '5.1.1', 'smtp;550 5.1.1 <bo@example.test> user unknown')}\r\n`;
  const client = nodemailer.createTransport({ host: '127.0.0.1', port: mx, secure: false, ignoreTLS: true, name: 'remote.test' });
  t.teardown(() => client.close());
  await client.sendMail({ envelope: { from: '', to: [returnPathOf(w, ana), returnPathOf(w, bo)] }, raw: report('x', both) });
  t.equal(mailState(w.ts.svc, ana).status, 3, 'the delayed recipient is not bounced');
  t.notOk(onList(w.ts.svc.db, 'ana@example.test', 'restrictions'), 'nor restricted by another recipient\'s failure');
  t.equal(mailState(w.ts.svc, bo).status, 6, 'the failed one is');
  t.equal(mailLogs(w.ts.svc, bo).at(-1)?.response, '550 5.1.1 <bo@example.test> user unknown', 'with its own diagnostic, "smtp;" gone');
  // RFC 6533: a global delivery-status part, here in base64.
  const encoded = `Reporting-MTA: dns; mx.example.test\r\n\r\n${block('cy@example.test', 'failed', '5.2.1', 'smtp; 550 5.2.1 disabled')}\r\n`;
  await sendToMx(mx, '', returnPathOf(w, cy), report('x', encoded, 'base64').replace('message/delivery-status', 'message/global-delivery-status'));
  t.equal(mailState(w.ts.svc, cy).status, 6, 'a base64 status part is read');
  // An abuse report whose quoted original is the copy as delivered (its html in base64), with the
  // headers that name the mail redacted: the open pixel in the decoded html still names it.
  const copy = w.sink.received.find((m) => m.to.includes('di@example.test'))?.raw.toString('latin1') ?? '';
  const redacted = copy.replace(/^(List-Unsubscribe|List-Unsubscribe-Post|Bounce-To|To):.*(\r\n[ \t].*)*\r\n/gim, '');
  t.notMatch(redacted, /\/t\/o\//, 'the pixel is not readable in the raw copy');
  const complaint = (original: string) => [
    'From: fbl@isp.test', 'To: complaints@mta.estafeta.test', 'Subject: abuse report', 'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="b4"', '', '--b4', 'Content-Type: text/plain', '', 'Abuse.',
    '--b4', 'Content-Type: message/feedback-report', '', 'Feedback-Type: abuse', 'Version: 1', '', '--b4', 'Content-Type: message/rfc822', '', original, '--b4--', '',
  ].join('\r\n');
  // Sent to ana's return path but quoting di's copy: about ana's mail only.
  await sendToMx(mx, 'fbl@isp.test', returnPathOf(w, ana), complaint(redacted));
  t.ok(onList(w.ts.svc.db, 'ana@example.test', 'complaints'), 'the mail of the return path it was sent to');
  t.notOk(onList(w.ts.svc.db, 'di@example.test', 'complaints'), 'not the one it quotes');
  await sendToMx(mx, 'fbl@isp.test', 'complaints@mta.estafeta.test', complaint(redacted));
  t.ok(onList(w.ts.svc.db, 'di@example.test', 'complaints'), 'to complaints@, the quoted original names the mail through its decoded html');
  await sendToMx(mx, 'fbl@isp.test', 'complaints@mta.estafeta.test', complaint(redacted));
  t.equal(mailLogs(w.ts.svc, di).filter((l) => l.event === 'complaint').length, 1, 'a repeated report is one complaint in the log');
});

// RFC 6533: a global DSN writes the address and the diagnostic in UTF-8; read as latin1, a
// UTF-8 recipient never matched its block and diagnostics came out garbled.
t.test('a global DSN in UTF-8 bounces its UTF-8 recipient by its own block, with a readable diagnostic', async (t) => {
  const w = await startWorld(t);
  const q = await w.send(['josé@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent' });
  const status = ['Reporting-MTA: dns; mx.example.test', '', 'Final-Recipient: rfc822; other@example.test', 'Action: delivered', 'Status: 2.0.0', '',
    'Final-Recipient: utf-8; josé@example.test', 'Action: failed', 'Status: 5.1.1', 'Diagnostic-Code: smtp; 550 5.1.1 Empfänger unbekannt', ''].join('\r\n');
  const report = ['From: MAILER-DAEMON@mx.example.test', 'To: x', 'Subject: Delivery Status', 'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b5"', '', '--b5', 'Content-Type: text/plain', '', 'Report.',
    '--b5', 'Content-Type: message/global-delivery-status', 'Content-Transfer-Encoding: 8bit', '', status, '--b5--', ''].join('\r\n');
  await sendToMx(w.ts.svc.ports.mx ?? 0, '', returnPathOf(w, q.mailIds[0]), report);
  t.equal(mailState(w.ts.svc, q.mailIds[0]).status, 6, 'bounced by the block that names it');
  t.equal(mailLogs(w.ts.svc, q.mailIds[0]).at(-1)?.response, '550 5.1.1 Empfänger unbekannt', 'the diagnostic as written');
});

// Exim's own bounce is plain text (no RFC 3464 report) naming the failed addresses in
// X-Failed-Recipients; an auto-reply to a return path names none and changes nothing.
t.test('an Exim plain-text bounce bounces the mail it names; an out-of-office reply does nothing', async (t) => {
  const w = await startWorld(t);
  const q = await w.send(['ana@example.test', 'bo@example.test']);
  await waitFor(() => q.mailIds.every((id) => mailState(w.ts.svc, id).status === 3), { what: 'sent' });
  const [ana, bo] = q.mailIds;
  const exim = (to: string) => ['From: Mail Delivery System <Mailer-Daemon@mx.example.test>', `To: ${to}`, 'Subject: Mail delivery failed: returning message to sender',
    'X-Failed-Recipients: ana@example.test', 'Auto-Submitted: auto-replied', '',
    'This message was created automatically by mail delivery software.', '',
    'A message that you sent could not be delivered to one or more of its', 'recipients. This is a permanent error. The following address(es) failed:', '',
    '  ana@example.test', '    host mx.example.test [192.0.2.1]', '    SMTP error from remote mail server after RCPT TO:<ana@example.test>:', '    550 5.1.1 No such user here', ''].join('\r\n');
  await sendToMx(w.ts.svc.ports.mx ?? 0, '', returnPathOf(w, ana), exim(returnPathOf(w, ana)));
  t.equal(mailState(w.ts.svc, ana).status, 6, 'the failed recipient\'s mail bounces');
  t.equal(mailLogs(w.ts.svc, ana).at(-1)?.response, '550 5.1.1 No such user here', 'with the reply Exim quotes');
  t.ok(onList(w.ts.svc.db, 'ana@example.test', 'restrictions'), 'and the address is restricted');
  await sendToMx(w.ts.svc.ports.mx ?? 0, '', returnPathOf(w, bo), exim(returnPathOf(w, bo)));
  t.equal(mailState(w.ts.svc, bo).status, 3, 'a bounce naming another address leaves this mail alone');
  const ooo = ['From: bo@example.test', `To: ${returnPathOf(w, bo)}`, 'Subject: Out of office', 'Auto-Submitted: auto-replied', '', 'I am away until Monday.', ''].join('\r\n');
  await sendToMx(w.ts.svc.ports.mx ?? 0, '', returnPathOf(w, bo), ooo);
  t.equal(mailState(w.ts.svc, bo).status, 3, 'an out-of-office reply changes nothing');
  t.notOk(onList(w.ts.svc.db, 'bo@example.test', 'restrictions'));
});

// Bounces as other MTAs write them: qmail's plain text, Exim giving up after temporary errors,
// a global DSN labelled global-delivery-status, a report part whose Content-Type is folded.
t.test('qmail and Exim retry-timeout bounces, a global-delivery-status DSN and a folded report type bounce the mail they name', async (t) => {
  const w = await startWorld(t);
  const q = await w.send(['ana@example.test', 'bo@example.test', 'cy@example.test', 'di@example.test', 'ed@example.test']);
  await waitFor(() => q.mailIds.every((id) => mailState(w.ts.svc, id).status === 3), { what: 'sent' });
  const [ana, bo, cy, di, ed] = q.mailIds;
  const mx = w.ts.svc.ports.mx ?? 0;
  const qmail = (to: string) => ['From: MAILER-DAEMON@mx.example.test', `To: ${to}`, 'Subject: failure notice', '',
    'Hi. This is the qmail-send program at mx.example.test.', 'I\'m afraid I wasn\'t able to deliver your message to the following addresses.',
    'This is a permanent error; I\'ve given up. Sorry it didn\'t work out.', '',
    '<zed@example.test>:', '192.0.2.1 does not like recipient.', 'Remote host said: 550 5.7.1 zed refused', '',
    '<ana@example.test>:', '192.0.2.1 does not like recipient.', 'Remote host said: 550 5.1.1 <ana@example.test>: Recipient address rejected', 'Giving up on 192.0.2.1.', '',
    '--- Below this line is a copy of the message.', '', 'Return-Path: <x>', '<bo@example.test>:', ''].join('\r\n');
  await sendToMx(mx, '', returnPathOf(w, ana), qmail(returnPathOf(w, ana)));
  t.equal(mailState(w.ts.svc, ana).status, 6, 'qmail: the mail whose address it names bounces');
  t.equal(mailLogs(w.ts.svc, ana).at(-1)?.response, '550 5.1.1 <ana@example.test>: Recipient address rejected', 'with the reply quoted for that address');
  t.ok(onList(w.ts.svc.db, 'ana@example.test', 'restrictions'));
  await sendToMx(mx, '', returnPathOf(w, bo), qmail(returnPathOf(w, bo)));
  t.equal(mailState(w.ts.svc, bo).status, 3, 'an address only in the copied message is not a failure');

  const eximTimeout = (to: string) => ['From: Mail Delivery System <Mailer-Daemon@mx.example.test>', `To: ${to}`, 'Subject: Mail delivery failed: returning message to sender',
    'X-Failed-Recipients: cy@example.test', 'Auto-Submitted: auto-replied', '', 'A message that you sent could not be delivered to one or more of its recipients.', '',
    '  cy@example.test', '    host mailstore.example.test [10.0.0.5]: 452 4.2.2 <cy@example.test>: Mailbox full: retry timeout exceeded', ''].join('\r\n');
  await sendToMx(mx, '', returnPathOf(w, cy), eximTimeout(returnPathOf(w, cy)));
  t.equal(mailState(w.ts.svc, cy).status, 6, 'Exim gave up after temporary errors: a permanent failure');
  t.match(mailLogs(w.ts.svc, cy).at(-1)?.detail, /status 5\.0\.0/, 'as 5.0.0, the quoted 4xx kept as its reply');

  const report = (to: string, rcpt: string, reportType: string, partType: string) => ['From: MAILER-DAEMON@mx.example.test', `To: ${to}`, 'Subject: Undelivered', 'MIME-Version: 1.0',
    `Content-Type: multipart/report; report-type=${reportType}; boundary="g1"`, '', '--g1', 'Content-Type: text/plain', '', 'Failed.', '--g1', partType, '',
    'Reporting-MTA: dns; mx.example.test', '', `Final-Recipient: utf-8; ${rcpt}`, 'Action: failed', 'Status: 5.1.1', '', '--g1--', ''].join('\r\n');
  await sendToMx(mx, '', returnPathOf(w, di), report(returnPathOf(w, di), 'di@example.test', 'global-delivery-status', 'Content-Type: message/global-delivery-status'));
  t.equal(mailState(w.ts.svc, di).status, 6, 'report-type=global-delivery-status (RFC 6533)');
  await sendToMx(mx, '', returnPathOf(w, ed), report(returnPathOf(w, ed), 'ed@example.test', 'delivery-status', 'Content-Type:\r\n message/delivery-status'));
  t.equal(mailState(w.ts.svc, ed).status, 6, 'a folded Content-Type on the report part');
});

// The MX takes mail from anyone: bytes past its limit are counted, not kept (by construction in
// onData; memory is not asserted here), and the answer is the size refusal.
t.test('a report six times the MX limit is answered 552 5.3.4 and the MX goes on', async (t) => {
  const w = await startWorld(t);
  const client = nodemailer.createTransport({ host: '127.0.0.1', port: w.ts.svc.ports.mx ?? 0, secure: false, ignoreTLS: true, name: 'remote.test' });
  t.teardown(() => client.close());
  const err = await client.sendMail({ envelope: { from: '', to: ['postmaster@mta.estafeta.test'] }, raw: Buffer.concat([Buffer.from('Subject: big\r\n\r\n'), Buffer.alloc(60 * 1024 * 1024, 'a\r\n')]) })
    .then(() => null, (e: { responseCode?: number; response?: string }) => e);
  t.equal(err?.responseCode, 552);
  t.match(err?.response, /5\.3\.4/);
  const small = await client.sendMail({ envelope: { from: '', to: ['postmaster@mta.estafeta.test'] }, raw: 'Subject: hi\r\n\r\nhello\r\n' });
  t.match(small.response, /^250 /, 'the next report is taken');
});

t.test('reports held at once share one memory budget: past it a report is deferred (452 4.3.1), and the budget frees as they end', async (t) => {
  const w = await startWorld(t);
  const mx = w.ts.svc.ports.mx ?? 0;
  // What the MX holds, from /metrics: each step waits for the server to have read what was
  // written, so the outcome does not depend on how fast a loaded machine reads seven streams.
  const held = async (): Promise<number> => {
    const text = (await w.ts.api('GET', '/metrics', { key: null, slug: null })).text;
    return Number(/^estafeta_mx_report_bytes_held (\d+)$/m.exec(text)?.[1] ?? NaN);
  };
  const line = `${'a'.repeat(998)}\r\n`;
  const mb = line.repeat(1024 * 1024 / line.length);
  const half = mb.slice(0, mb.length / 2 - ((mb.length / 2) % line.length));
  const open = async (): Promise<Awaited<ReturnType<typeof lineClient>>> => {
    const c = await lineClient(t, mx);
    await c.cmd('EHLO remote.test');
    t.match(await c.cmd('MAIL FROM:<>'), /^250/);
    t.match(await c.cmd('RCPT TO:<postmaster@mta.estafeta.test>'), /^250/);
    t.match(await c.cmd('DATA'), /^354/);
    return c;
  };
  // Seven reports of 9.5 MB: 66.5 MB against a budget of 64. Six are held whole, then the seventh.
  const head = 'Subject: big report\r\n\r\n';
  const report = head.length + 9 * mb.length + half.length;
  const clients = await Promise.all(Array.from({ length: 7 }, open));
  for (const c of clients.slice(0, 6)) {
    c.write(head);
    for (let i = 0; i < 9; i++) c.write(mb);
    c.write(half);
  }
  // smtp-server keeps a report's last few bytes back until it knows whether they end the DATA.
  const whole = (n: number) => async (): Promise<boolean> => (await held()) >= n - 64;
  await waitFor(whole(6 * report), { what: 'six reports held whole', timeoutMs: 60_000, intervalMs: 200 });
  const six = await held();
  const last = clients[6];
  last.write(head);
  for (let i = 0; i < 9; i++) last.write(mb);
  last.write(half);
  t.match(await last.cmd('.'), /^452 4\.3\.1 /, 'the one that would pass the budget is deferred');
  t.equal(await held(), six, 'and holds nothing');
  const replies = await Promise.all(clients.slice(0, 6).map((c) => c.cmd('.')));
  t.ok(replies.every((r) => /^250 /.test(r)), `the six held are taken: ${replies.map((r) => r.slice(0, 9)).join(', ')}`);
  t.equal(await held(), 0, 'the budget is free again once they ended');
  const after = await open();
  t.match(await after.cmd('Subject: small\r\n\r\nhello\r\n.'), /^250 /, 'the next report is taken');
  // Senders that hang up mid-report give their share back too (or a few would defer every report).
  const quitters = await Promise.all(Array.from({ length: 7 }, open));
  for (const c of quitters) for (let i = 0; i < 9; i++) c.write(mb);
  await waitFor(whole(7 * 9 * mb.length), { what: 'seven unfinished reports held', timeoutMs: 60_000, intervalMs: 200 });
  for (const c of quitters) c.close();
  await waitFor(async () => (await held()) === 0, { what: 'the shares of the senders that hung up given back', timeoutMs: 20_000 });
  const big = await open();
  big.write('Subject: big\r\n\r\n');
  for (let i = 0; i < 9; i++) big.write(mb);
  t.match(await big.cmd('.'), /^250 /, 'a 9 MB report after seven abandoned ones is taken');
});

t.test('the inbound MX: an aborted transaction leaves nothing behind; an unparsable report is refused for good', async (t) => {
  const w = await startWorld(t);
  const q = await w.send(['ana@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent' });
  const c = await lineClient(t, w.ts.svc.ports.mx ?? 0);
  await c.cmd('EHLO remote.test');
  t.match(await c.cmd('FOO'), /^500 5\.5\.2 /, 'the library\'s own replies carry an enhanced code too');
  t.match(await c.cmd('RCPT TO:<x@y.test>'), /^503 5\.5\.1 /);
  t.match(await c.cmd('MAIL FROM:<>'), /^250/);
  t.match(await c.cmd(`RCPT TO:<${returnPathOf(w, q.mailIds[0])}>`), /^250/);
  t.match(await c.cmd('RSET'), /^250/);
  t.match(await c.cmd('MAIL FROM:<>'), /^250/);
  t.match(await c.cmd('RCPT TO:<postmaster>'), /^250/);
  t.match(await c.cmd('DATA'), /^354/);
  t.match(await c.cmd(`${dsn('postmaster', 'ana@example.test')}.`), /^250/);
  t.equal(mailState(w.ts.svc, q.mailIds[0]).status, 3, 'the DSN reached postmaster only: the reset recipient is not bounced');
  t.notOk(onList(w.ts.svc.db, 'ana@example.test', 'restrictions'));
  const parts = Array.from({ length: 1001 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join('');
  t.match(await c.cmd('MAIL FROM:<>'), /^250/);
  t.match(await c.cmd('RCPT TO:<complaints@mta.estafeta.test>'), /^250/);
  t.match(await c.cmd('DATA'), /^354/);
  t.match(await c.cmd(`Subject: x\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${parts}--b--\r\n.`), /^554 5\.6\.0 /, 'past the parser\'s limits: 554, not 451');
  // A crafted report with a million spaces in quoted-printable parts (mailparser's decoding of
  // such a run grows with its square: hours) is read in one pass: the failure it reports applies.
  const spaces = ' '.repeat(1_000_000);
  const crafted = [
    'Subject: Undelivered', 'MIME-Version: 1.0', 'Content-Type: multipart/report; report-type=delivery-status; boundary="b5"', '',
    '--b5', 'Content-Type: text/plain', 'Content-Transfer-Encoding: quoted-printable', '', `${spaces}x`,
    '--b5', 'Content-Type: message/delivery-status', 'Content-Transfer-Encoding: quoted-printable', '',
    `Reporting-MTA: dns; mx.example.test=\r\n${spaces}x`, '', 'Final-Recipient: rfc822; ana@example.test', 'Action: failed', 'Status: 5.1.1', '--b5--', '',
  ].join('\r\n');
  t.match(await c.cmd('MAIL FROM:<>'), /^250/);
  t.match(await c.cmd(`RCPT TO:<${returnPathOf(w, q.mailIds[0])}>`), /^250/);
  t.match(await c.cmd('DATA'), /^354/);
  t.match(await c.cmd(`${crafted}.`), /^250/);
  t.equal(mailState(w.ts.svc, q.mailIds[0]).status, 6, 'bounced by the crafted report');
});

t.test('the List-Unsubscribe mailto box is signed: a mail to it unsubscribes, a forged one is refused', async (t) => {
  const w = await startWorld(t);
  const q = await w.send(['ana@example.test', 'bo@example.test']);
  await waitFor(() => q.mailIds.every((id) => mailState(w.ts.svc, id).status === 3), { what: 'sent' });
  const mx = w.ts.svc.ports.mx ?? 0;
  const copy = w.sink.received.find((m) => m.to[0] === 'ana@example.test');
  const head = (copy?.raw ?? Buffer.alloc(0)).toString('latin1').split('\r\n\r\n')[0];
  const box = /<mailto:([^?>]+)\?subject=unsubscribe>/.exec(head)?.[1] ?? '';
  t.match(box, new RegExp(`^unsubscribe\\+${q.mailIds[0]}\\.[0-9a-f]{20}@mta\\.estafeta\\.test$`), 'unsubscribe+<mail_id>.<sig>@<hostname>');
  const refusal = (p: Promise<void>): Promise<{ responseCode?: number } | null> => p.then(() => null, (e: { responseCode?: number }) => e);
  for (const forged of [`unsubscribe+${q.mailIds[1]}@mta.estafeta.test`, box.replace(q.mailIds[0], q.mailIds[1])]) {
    t.equal((await refusal(sendToMx(mx, 'someone@remote.test', forged, 'Subject: unsubscribe\r\n\r\n')))?.responseCode, 550, `${forged} refused`);
  }
  t.notOk(onList(w.ts.svc.db, 'bo@example.test', 'unsubscribes'), 'knowing a mail id is not enough');
  await sendToMx(mx, 'ana@example.test', box.toUpperCase().replace('@MTA.ESTAFETA.TEST', '@mta.estafeta.test'), 'Subject: unsubscribe\r\n\r\n');
  t.ok(onList(w.ts.svc.db, 'ana@example.test', 'unsubscribes'), 'the signed box unsubscribes (in any case)');
});

t.test('a click redirects to the link exactly as the mail has it, percent-encoding only what a header cannot carry', async (t) => {
  const w = await startWorld(t);
  const links = ['https://Example.com', 'https://example.com/Landing?utm=A', 'https://example.com/a b/ñ'];
  const q = await w.send(['ana@example.test'], { html: `<p>${links.map((l) => `<a href="${l}">x</a>`).join(' ')}</p>` });
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent' });
  const html = String((await simpleParser(w.sink.received[0].raw)).html);
  const clicks = [...html.matchAll(/href="([^"]+\/t\/c\/[^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
  t.equal(clicks.length, 3);
  const locations: string[] = [];
  for (const c of clicks) {
    const res = await fetch(w.ts.url + c.slice(w.ts.svc.config.publicUrl.length), { redirect: 'manual' });
    t.equal(res.status, 302);
    locations.push(String(res.headers.get('location')));
  }
  t.same(locations, ['https://Example.com', 'https://example.com/Landing?utm=A', 'https://example.com/a%20b/%C3%B1']);
  const head = await fetch(w.ts.url + clicks[0].slice(w.ts.svc.config.publicUrl.length), { method: 'HEAD', redirect: 'manual' });
  t.equal(head.status, 302, 'a HEAD is answered');
  t.equal(mailState(w.ts.svc, q.mailIds[0]).clicks, 3, 'but counts no click');
  const recorded = await w.ts.api('GET', '/v1/activities/clicks');
  t.same(recorded.body.data.map((r: { url: string }) => r.url).sort(), [...links].sort(), 'the clicks list shows the links as the mail had them');
});

t.test('an ESTAFETA_PUBLIC_URL with a path: its links are served under that path too', async (t) => {
  const w = await startWorld(t, { env: { ESTAFETA_PUBLIC_URL: 'https://mail.example.net/estafeta/' } });
  const q = await w.send(['ana@example.test']);
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent' });
  const html = String((await simpleParser(w.sink.received[0].raw)).html);
  const pixel = /src="(https:\/\/mail\.example\.net\/estafeta\/t\/o\/[^"]+)"/.exec(html)?.[1] ?? '';
  t.ok(pixel, 'the pixel lives under the public URL and its path');
  const res = await fetch(w.ts.url + pixel.slice('https://mail.example.net'.length));
  t.equal(res.status, 200, 'reached with the path, as no proxy stripped it');
  t.equal((await fetch(w.ts.url + pixel.slice('https://mail.example.net/estafeta'.length))).status, 200, 'and without it, behind a proxy that strips it');
  t.equal(mailState(w.ts.svc, q.mailIds[0]).opens, 2);
});
