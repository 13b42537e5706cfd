// The accept path's synchronous MIME pass (src/accept/mime-bytes.ts) must produce exactly the
// bytes nodemailer's own streaming MimeNode.build() produces for the same tree: each message
// below is compiled twice with the same boundaries and built both ways.
import t from 'tap';
import { Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { mimeBytes } from '../../../src/accept/mime-bytes';
import { buildMessage } from '../../../src/accept/assemble';
import { simpleParser } from 'mailparser';
import { decodeEncodedWords } from '../../../src/smtp/raw-headers';

const base: Mail.Options = {
  from: { address: 'sender@example.test', name: 'Sénder Ñame' },
  to: [{ address: 'reader@example.test', name: '' }],
  subject: 'Hello',
  messageId: '<fixed@estafeta.test>',
  date: new Date(Date.UTC(2026, 10, 21, 12, 0, 0)),
  disableFileAccess: true,
  disableUrlAccess: true,
  baseBoundary: 'fixedboundary',
};

const pdf = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 37) % 256));
const cases: Record<string, Mail.Options> = {
  'html only': { html: `<html><body>${'<p>Paragraph of a realistic body.</p>\n'.repeat(40)}</body></html>` },
  'text only, ascii': { text: 'plain text\r\nsecond line' },
  'text and html': { text: 'Hi there', html: '<b>Hi there</b>' },
  'unicode everywhere': { subject: 'Ünïcödé sübject — ✓ 日本語', text: 'Grüße aus Köln ✓\n'.repeat(30), html: '<p>日本語のテキスト</p>'.repeat(50) },
  'long lines and trailing whitespace': { text: `${'x'.repeat(300)} \t\n${'y '.repeat(200)}\n  `, html: `<p>${'z'.repeat(1000)}</p>   ` },
  'lone CR and LF in text': { text: 'a\rb\nc\r\nd\r', html: 'no newline at the end' },
  'empty html': { html: '' },
  'cc, reply-to and custom headers': {
    html: '<p>x</p>', cc: [{ address: 'cc@example.test', name: 'Cc Person' }], replyTo: { address: 'reply@example.test', name: 'R' },
    headers: { 'X-Campaign': 'spring ✓', 'List-Unsubscribe': '<mailto:u@example.test>' },
  },
  'attachments: binary, text, unicode name': {
    html: '<p>see attached</p>', text: 'see attached',
    attachments: [
      { filename: 'report.pdf', contentType: 'application/pdf', content: pdf },
      { filename: 'notes.txt', contentType: 'text/plain', content: Buffer.from('line one\nline two é\n') },
      { filename: 'résumé ✓.csv', contentType: 'text/csv', content: Buffer.from('a,b\r\n1,2\r\n') },
      { filename: 'empty.bin', contentType: 'application/octet-stream', content: Buffer.alloc(0) },
    ],
  },
  'quoted-printable binary part': {
    html: '<p>x</p>',
    attachments: [{ filename: 'data.bin', contentType: 'application/octet-stream', content: Buffer.from('a\rb\nc =\xff'), contentTransferEncoding: 'quoted-printable' }],
  },
};

const compile = (o: Mail.Options) => new MailComposer({ ...base, ...o }).compile();

for (const [name, o] of Object.entries(cases)) {
  t.test(name, async (t) => {
    const streamed = await compile(o).build();
    const direct = mimeBytes(compile(o));
    t.ok(direct, 'the tree qualifies for the synchronous pass');
    t.equal(direct?.toString('latin1'), streamed.toString('latin1'), 'same bytes as MimeNode.build()');
  });
}

t.test('a tree with stream content is left to the streaming build', async (t) => {
  t.equal(mimeBytes(compile({ html: '<p>x</p>', attachments: [{ filename: 's.txt', content: Readable.from(['streamed']) }] })), null);
  t.equal(mimeBytes(compile({ raw: 'Subject: raw\r\n\r\nbody\r\n' })), null);
});

t.test('buildMessage (the worker task) answers the same bytes as nodemailer', async (t) => {
  const html = '<p>Grüße</p>';
  const parts = {
    from: { address: 'sender@example.test', name: 'S' }, to: [{ address: 'r@example.test', name: '' }], cc: [], replyTo: null,
    subject: 'S', html, text: null, headers: {}, attachments: [], messageId: '<m@h>', at: Date.UTC(2026, 0, 1),
  };
  const built = await buildMessage(parts);
  const text = built.toString('latin1');
  t.match(text, /^Content-Type: text\/html; charset=utf-8\r\n/m);
  t.match(text, /Message-ID: <m@h>\r\n/);
  t.ok(text.endsWith('\r\n'));
  // Same parts, same boundaries: nodemailer's streaming build gives the same body.
  const body = (b: Buffer) => b.toString('latin1').split('\r\n\r\n').slice(1).join('\r\n\r\n');
  const streamed = await new MailComposer({ ...base, from: parts.from, to: parts.to, subject: 'S', html, messageId: '<m@h>', date: new Date(parts.at) }).compile().build();
  t.equal(body(built), body(streamed));
});

t.test('custom header values: folded at spaces, and RFC 2047-encoded where a word is too long to fold', async (t) => {
  const headers = {
    'X-Long-Token': 'v'.repeat(990),
    'X-Url': `https://example.com/${'a'.repeat(120)} tail`,
    'X-Words': 'word '.repeat(150).trim(),
    'X-Short': 'plain value',
  };
  const parts = {
    from: { address: 'sender@example.test', name: 'S' }, to: [{ address: 'r@example.test', name: '' }], cc: [], replyTo: null,
    subject: 'S', html: '<p>x</p>', text: null, headers, attachments: [], messageId: '<m@h>', at: Date.UTC(2026, 0, 1),
  };
  const built = await buildMessage(parts);
  const head = built.toString('latin1').split('\r\n\r\n')[0];
  for (const line of head.split('\r\n')) t.ok(line.length <= 78, `line within 78: ${line.slice(0, 40)}…`);
  t.match(head, /^X-Short: plain value$/m, 'a short value is left as it is');
  t.match(head, /^X-Words: word word/m, 'a value with spaces is folded, not encoded');
  t.match(head, /^X-Long-Token: =\?UTF-8\?B\?/m);
  // mailparser leaves X- fields as written (unfolded); their encoded words decode to the value.
  const parsed = await simpleParser(built);
  for (const [name, value] of Object.entries(headers)) t.equal(decodeEncodedWords(String(parsed.headers.get(name.toLowerCase()))), value, `${name} reads back as sent`);
});
