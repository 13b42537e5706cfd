import t from 'tap';
import { simpleParser } from 'mailparser';
import { startWorld, SENDER } from '../helpers/delivery-world';
import { waitFor } from '../helpers/service';

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
