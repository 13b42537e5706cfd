import t from 'tap';
import { simpleParser } from 'mailparser';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { mailState, startWorld, SENDER } from '../helpers/delivery-world';
import { waitFor } from '../helpers/service';

// libmime: mailparser's own RFC 2047 decoder (no type declarations of its own).
const libmime = require('libmime') as { decodeWords(text: string): string };

/** A multipart/form-data body as a browser or `curl -F` builds it (binary parts, UTF-8 filenames). */
function multipart(parts: { name: string; value?: string; filename?: string; type?: string; content?: Buffer }[]): { body: Buffer; type: string } {
  const boundary = '----estafeta-form-7d2c';
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`), p.content ?? Buffer.from(p.value ?? ''), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

t.test('file parts of a multipart send reach the recipient byte for byte, under their UTF-8 names', async (t) => {
  const w = await startWorld(t);
  const binary = Buffer.from([0, 1, 2, 0x0d, 0x0a, 0x2d, 0x2d, 255, 254]); // CR LF "--" inside a part must not end it
  const pdf = Buffer.from('%PDF-1.4\n%âãÏÓ tiny');
  const form = multipart([
    { name: 'sender_email', value: SENDER },
    { name: 'to', value: JSON.stringify([{ email: 'ana@example.test' }]) },
    { name: 'subject', value: 'Adjuntos' },
    { name: 'html', value: '<p>ver adjuntos</p>' },
    { name: 'attachments', filename: 'bin.dat', type: 'application/octet-stream', content: binary },
    { name: 'attachments', filename: 'año ñandú.pdf', type: 'application/pdf', content: pdf },
  ]);
  const r = await w.ts.api('POST', '/v1/mails/send', { raw: form.body, headers: { 'Content-Type': form.type } });
  t.equal(r.status, 200, r.text);
  const got = await waitFor(() => w.sink.received.find((m) => m.to.includes('ana@example.test')), { what: 'the mail at the MX' });
  if (!got) throw new Error('unreachable: waitFor resolves only with a value');
  const parsed = await simpleParser(got.raw);
  t.equal(parsed.subject, 'Adjuntos');
  t.same(parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString('hex')]), [
    ['bin.dat', 'application/octet-stream', binary.toString('hex')],
    ['año ñandú.pdf', 'application/pdf', pdf.toString('hex')],
  ]);
});

t.test('what the recipient reads is what was sent: threading ids, text that looks encoded, a forwarded message as an attachment', async (t) => {
  const w = await startWorld(t);
  const gmail = '<CAKz5h0p+Zq8m1XyBvQ2Wn3mC4oJd5r6Yt7u8i9o0pLkJhGfDsA@mail.gmail.com>';
  const outlook = '<AM0PR01MB1234567890ABCDEF1234567890ABCDEF@AM0PR01MB1234.eurprd01.prod.outlook.com>';
  const forwarded = 'From: a@example.org\nTo: b@example.org\nSubject: the original\n\nIts body, with Unix line ends.\n';
  const q = await w.send(['ana@example.test'], {
    subject: '=?UTF-8?Q?not_encoded?= literal',
    headers: { 'In-Reply-To': gmail, References: `${outlook} ${gmail}`, 'X-Encoded-Look': '=?UTF-8?B?SGVsbG8=?=' },
    attachments: [{ type: 'message/rfc822', filename: 'original.eml', content: Buffer.from(forwarded).toString('base64') }],
  });
  await waitFor(() => mailState(w.ts.svc, q.mailIds[0]).status === 3, { what: 'sent' });
  const got = w.sink.received.find((m) => m.to.includes('ana@example.test'));
  const parsed = await simpleParser(got?.raw ?? Buffer.alloc(0));
  t.equal(parsed.inReplyTo, gmail, 'a long message id is not encoded (RFC 5322 3.6.4)');
  t.same(parsed.references, [outlook, gmail]);
  t.equal(parsed.subject, '=?UTF-8?Q?not_encoded?= literal', 'text that looks like an encoded word reads as sent');
  const rawLook = /^X-Encoded-Look: (.*(?:\r\n[ \t].*)*)/m.exec(got?.raw.toString('latin1') ?? '')?.[1] ?? '';
  t.equal(libmime.decodeWords(rawLook.replace(/\r\n[ \t]/g, ' ')), '=?UTF-8?B?SGVsbG8=?=', `a custom value as well (${rawLook})`);
  t.same(parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString()]), [['original.eml', 'message/rfc822', forwarded.replace(/\n/g, '\r\n')]],
    'an attachment, not inline, its lines CRLF as a message travels');
  const result = await dkimVerify(got?.raw ?? Buffer.alloc(0), { resolver: w.txtResolver });
  t.equal(result.results[0]?.status.result, 'pass');
});
