// The submission door reads a single-part text message's header section only (src/smtp/
// submission.ts parseSubmitted): every field it takes must equal what mailparser reads from the
// whole message, and any other message is parsed whole, attachments weighed.
import t from 'tap';
import { simpleParser } from 'mailparser';
import { parseSubmitted, type SubmittedHead } from '../../../src/smtp/submission';

const crlf = (lines: string[]): Buffer => Buffer.from(lines.join('\r\n'), 'latin1');
const body = '<p>Gr=C3=BC=C3=9Fe</p>\r\n'.repeat(50);

const singlePart: Record<string, Buffer> = {
  'html, quoted-printable': crlf(['From: "Sender" <sender@example.test>', 'To: r@example.test', 'Subject: Hello', 'Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: quoted-printable', '', body]),
  'encoded subject and name, folded header, X-Svc fields': crlf([
    'From: =?UTF-8?Q?S=C3=A9nder?= <sender@example.test>', 'Subject: =?UTF-8?B?w5xuaWPDtmRl?=', ' =?UTF-8?Q?_suite?=',
    'X-Svc-Category: =?UTF-8?Q?R=C3=A9union?=', 'X-Svc-Custom-Msg-Id: abc-123', 'X-Svc-Test-Mode: true', 'Content-Type: TEXT/PLAIN', '', 'plain body',
  ]),
  'no Content-Type at all, LF line ends': Buffer.from('From: sender@example.test\nSubject: bare\n\nbody\n'),
  'inline disposition, group in From': crlf(['From: Team: a@example.test, b@example.test;, c@example.test', 'Subject: x', 'Content-Type: text/plain', 'Content-Disposition: inline', '', 'x']),
  'no body at all': crlf(['From: sender@example.test', 'Subject: only headers']),
  'punycode domain': crlf(['From: sender@xn--bcher-kva.example', 'Subject: idn', 'Content-Type: text/html', '', '<p>x</p>']),
  // The header-only path reads the section with mailparser's own pieces, not its stream: these
  // hold the two readings equal where decoding has choices.
  'raw UTF-8 in a header, two Subject and two From fields': Buffer.from(
    'From: "Zoë" <first@example.test>\r\nFrom: second@example.test\r\nSubject: Grüße\r\nSubject: =?ISO-8859-1?Q?Gr=FC=DFe_2?=\r\nX-Svc-Group-Code: g\u00e9\r\n\r\nbody\r\n', 'utf8'),
  'an encoded word where the address should be, a comment, a folded From': crlf([
    'From: =?UTF-8?B?YXR0YWNrZXJAZXZpbC50ZXN0?= (comment)', ' <real@example.test>', 'Subject: =?UTF-8?Q?a?= =?UTF-8?Q?b?=', 'X-Svc-Test-Mode: TRUE', '', 'x']),
  'an mbox From_ line before the fields': Buffer.from('From sender@example.test Mon Jan  1 00:00:00 2026\nFrom: sender@example.test\nSubject: mbox\n\nbody\n'),
  'a From without any address': crlf(['From: undisclosed-recipients:;', 'Subject: none', '', 'x']),
};

const fields = (p: SubmittedHead) => ({
  from: p.from?.value.find((a) => a.address)?.address,
  subject: p.subject,
  headers: [...p.headers.entries()].filter(([k]) => k.startsWith('x-svc-') || k === 'from' || k === 'subject' || k === 'content-type'),
});

for (const [name, raw] of Object.entries(singlePart)) {
  t.test(`single part: ${name}`, async (t) => {
    const whole = await simpleParser(raw);
    const { parsed, attachmentBytes } = await parseSubmitted(raw);
    t.same(fields(parsed), fields(whole), 'the header section gives the same fields as the whole message');
    t.equal(attachmentBytes, 0);
    t.equal(whole.attachments.length, 0, 'mailparser finds no attachment either');
  });
}

// Messages whose header fields say "text" one way and "attachment" another (found in review):
// mailsplit takes the first field, undecoded, and guesses a type from a file name.
const pdf64 = Buffer.alloc(3000, 0x41).toString('base64').replace(/.{76}/g, '$&\r\n');
const tricky: Record<string, string[]> = {
  'inline disposition naming a pdf, no Content-Type': ['Content-Disposition: inline; filename="report.pdf"', 'Content-Transfer-Encoding: base64'],
  'two Content-Type fields, pdf first': ['Content-Type: application/pdf', 'Content-Type: text/plain', 'Content-Transfer-Encoding: base64'],
  'two Content-Disposition fields, attachment first': ['Content-Type: text/plain', 'Content-Disposition: attachment; filename=a.txt', 'Content-Disposition: inline', 'Content-Transfer-Encoding: base64'],
  'an encoded word for the type': ['Content-Type: =?us-ascii?Q?text/plain?=', 'Content-Transfer-Encoding: base64'],
  'text/plain naming a file': ['Content-Type: text/plain; name="data.bin"', 'Content-Transfer-Encoding: base64'],
};
for (const [name, fields] of Object.entries(tricky)) {
  t.test(`weighed as mailparser weighs the whole message: ${name}`, async (t) => {
    const raw = crlf(['From: a@example.test', 'Subject: s', 'MIME-Version: 1.0', ...fields, '', pdf64, '']);
    const whole = await simpleParser(raw);
    t.equal((await parseSubmitted(raw)).attachmentBytes, whole.attachments.reduce((n, a) => n + a.size, 0));
  });
}

t.test('a multipart type followed by a text type is parsed whole', async (t) => {
  const raw = crlf(['From: a@example.test', 'Subject: s', 'Content-Type: multipart/mixed; boundary=b', 'Content-Type: text/plain', '',
    '--b', 'Content-Type: text/plain', '', 'hi', '--b', 'Content-Type: application/pdf', 'Content-Transfer-Encoding: base64', '', pdf64, '--b--', '']);
  const whole = await simpleParser(raw);
  t.equal((await parseSubmitted(raw)).attachmentBytes, whole.attachments.reduce((n, a) => n + a.size, 0));
  t.ok(whole.attachments.length > 0);
});

t.test('a text part sent as an attachment, and a multipart message, are weighed whole', async (t) => {
  const pdf = Buffer.alloc(3000, 7);
  const multipart = crlf([
    'From: sender@example.test', 'Subject: with attachment', 'Content-Type: multipart/mixed; boundary="b"', '',
    '--b', 'Content-Type: text/plain', '', 'see attached', '--b', 'Content-Type: application/pdf; name="a.pdf"', 'Content-Transfer-Encoding: base64', '',
    pdf.toString('base64'), '--b--', '',
  ]);
  t.equal((await parseSubmitted(multipart)).attachmentBytes, 3000);
  const attachedText = crlf(['From: sender@example.test', 'Subject: x', 'Content-Type: text/plain', 'Content-Disposition: attachment; filename="notes.txt"', '', 'twelve bytes']);
  const whole = await simpleParser(attachedText);
  t.equal((await parseSubmitted(attachedText)).attachmentBytes, whole.attachments.reduce((n, a) => n + a.size, 0));
  t.ok((await parseSubmitted(attachedText)).attachmentBytes > 0, 'counted as mailparser counts it');
});
