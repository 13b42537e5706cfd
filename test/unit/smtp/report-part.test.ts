// The report part of a DSN or ARF message is cut from the raw text (src/smtp/mx.ts reportPart).
// The MX door takes mail from anyone: the cut must be one pass over the message whatever it
// holds (the backtracking pattern it replaces took minutes on the input below, on the loop every
// door shares; the suite's timeout fails it).
import t from 'tap';
import { reportPart } from '../../../src/smtp/mx';

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
