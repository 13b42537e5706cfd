// The report part of a DSN or ARF message is cut from the raw text (src/smtp/mx.ts reportPart).
// The MX door takes mail from anyone: the cut must be one pass over the message whatever it
// holds (the backtracking pattern it replaces took minutes on the input below, on the loop every
// door shares; the suite's timeout fails it).
import t from 'tap';
import { decodeQuotedPrintable, reportPart } from '../../../src/smtp/mx';
import { dsnBlockFor, dsnRecipients, isPermanentFailure } from '../../../src/delivery/feedback';

const arf = [
  '--b1', 'Content-Type: text/plain', '', 'This is an abuse report.', '',
  '--b1', 'Content-Type: message/feedback-report', 'Content-Transfer-Encoding: 7bit', '', 'Feedback-Type: abuse', 'Version: 1', '',
  '--b1', 'Content-Type: message/rfc822', '', 'Subject: x', '', 'original', '--b1--', '',
].join('\r\n');

t.test('the first part of the type, its body up to the next boundary', async (t) => {
  t.equal(reportPart(arf, 'message/feedback-report'), 'Feedback-Type: abuse\r\nVersion: 1\r\n');
  t.equal(reportPart(arf.replace(/\r\n/g, '\n'), 'message/feedback-report'), 'Feedback-Type: abuse\nVersion: 1\n', 'bare LF alike');
  t.equal(reportPart(arf.replace('message/feedback-report', 'MESSAGE/Feedback-Report'), 'message/feedback-report'), 'Feedback-Type: abuse\r\nVersion: 1\r\n', 'any case');
  const dsn = 'Content-Type: message/global-delivery-status\r\n\r\nAction: failed\r\nStatus: 5.1.1\r\n';
  t.equal(reportPart(dsn, 'message/(?:global-)?delivery-status'), 'Action: failed\r\nStatus: 5.1.1\r\n', 'up to the end without a boundary');
  t.equal(reportPart(arf, 'message/delivery-status'), null, 'no such part');
});

t.test('a crafted report is read in one pass', async (t) => {
  const lines = 'Content-Type: message/feedback-report\r\n'.repeat(250_000);
  t.equal(reportPart(lines, 'message/feedback-report'), null, 'a part header that never ends has no body');
  const blankAtEnd = `${lines}\r\n${'Feedback-Type: abuse\r\n'.repeat(1000)}`;
  t.equal(reportPart(blankAtEnd, 'message/feedback-report')?.length, 'Feedback-Type: abuse\r\n'.length * 1000);
});

t.test('a part in base64 or quoted-printable is decoded, whichever of its header lines comes first', async (t) => {
  const fields = 'Action: failed\r\nStatus: 5.1.1\r\n';
  const b64 = `--b\r\nContent-Transfer-Encoding: base64\r\nContent-Type: message/delivery-status\r\n\r\n${Buffer.from(fields).toString('base64')}\r\n--b--\r\n`;
  t.equal(reportPart(b64, 'message/(?:global-)?delivery-status'), fields, 'the encoding named before the type');
  const qp = '--b\r\nContent-Type: message/delivery-status\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nAction: failed=\r\n\r\nStatus: 5.1.1=0D=0A\r\n--b--\r\n';
  t.equal(reportPart(qp, 'message/delivery-status'), 'Action: failed\r\nStatus: 5.1.1\r\n', 'after it (a soft line break joins)');
  const crafted = `--b\r\nContent-Transfer-Encoding: base64\r\nContent-Type: message/delivery-status\r\n\r\n${'!@#$'.repeat(500_000)}`;
  t.type(reportPart(crafted, 'message/delivery-status'), 'string', 'garbage base64 decodes to something, in one pass');
});

t.test('DSN blocks: each recipient its own; the per-message block is not one', async (t) => {
  const text = 'Reporting-MTA: dns; mx.test\r\n\r\nFinal-Recipient: rfc822; ana@x.test\r\nAction: delayed\r\nStatus: 4.2.2\r\n\r\n'
    + 'Original-Recipient: rfc822;<Bo@X.test>\r\nFinal-Recipient: rfc822; bo@fwd.test\r\nAction: failed\r\nStatus: 5.1.1 (gone)\r\nDiagnostic-Code: smtp;550 5.1.1\r\n  no such user\r\n';
  const blocks = dsnRecipients(text);
  t.same(blocks.map((b) => [b.final, b.original, b.action, b.status]), [['ana@x.test', null, 'delayed', '4.2.2'], ['bo@fwd.test', 'bo@x.test', 'failed', '5.1.1']]);
  t.equal(blocks[1].diagnostic, '550 5.1.1 no such user', 'unfolded, "smtp;" gone');
  t.equal(dsnBlockFor(blocks, 'ana@x.test')?.action, 'delayed');
  t.equal(dsnBlockFor(blocks, 'BO@x.test')?.status, '5.1.1', 'by the original recipient, any case');
  t.equal(dsnBlockFor(blocks, 'cy@x.test'), null, 'a recipient no block names, among several');
  t.equal(isPermanentFailure(blocks[0]), false);
  t.equal(isPermanentFailure(blocks[1]), true);
  const one = dsnRecipients('Reporting-MTA: dns; mx.test\n\nFinal-Recipient: rfc822; other@fwd.test\nAction: failed\nStatus: 5.0.0\n');
  t.equal(dsnBlockFor(one, 'ana@x.test')?.final, 'other@fwd.test', 'a lone block: the address a forwarder rewrote to');
  t.same(dsnRecipients('Reporting-MTA: dns; mx.test\nAction: failed\nStatus: 5.0.0\n').map((b) => b.action), ['failed'], 'a sloppy one-block report');
});

t.test('DSN blocks separated by lines holding only spaces stay apart', async (t) => {
  const text = 'Reporting-MTA: dns; mx.test\r\n \r\nFinal-Recipient: rfc822; ana@x.test\r\nAction: delayed\r\nStatus: 4.2.2\r\n\t\r\n'
    + 'Final-Recipient: rfc822; bo@x.test\r\nAction: failed\r\nStatus: 5.1.1\r\n';
  t.same(dsnRecipients(text).map((b) => [b.final, b.action]), [['ana@x.test', 'delayed'], ['bo@x.test', 'failed']]);
  t.same(dsnRecipients('Final-Recipient: rfc822; ana@x.test\nAction: failed\nStatus: 5.1.1\n').map((b) => b.final), ['ana@x.test'], 'no per-message block');
});

t.test('quoted-printable report fields are decoded in one pass', async (t) => {
  t.equal(decodeQuotedPrintable('Action: fail=\r\ned\r\nStatus: 5.1.1=3D'), 'Action: failed\r\nStatus: 5.1.1=');
  const crafted = `${' '.repeat(2_000_000)}x=20`;
  t.equal(decodeQuotedPrintable(crafted).length, 2_000_002);
});
