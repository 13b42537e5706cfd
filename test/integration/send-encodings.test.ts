import t from 'tap';
import zlib from 'node:zlib';
import http from 'node:http';
import net from 'node:net';
import { sendFixture } from './send-fixture';
import { startTestService } from '../helpers/service';

const MB = 1024 * 1024;

t.test('a gzip body is inflated and accepted', async (t) => {
  const f = await sendFixture(t);
  const body = { sender_email: f.sender, to: [{ email: f.rcpt('gz') }], subject: 'Zipped', html: '<p>z</p>' };
  const r = await f.s.api('POST', '/v1/mails/send', { raw: zlib.gzipSync(JSON.stringify(body)), headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' } });
  t.equal(r.status, 200, r.text);
  const list = await f.s.api('GET', `/v1/mails?msg_id=${r.body.message_id}`);
  t.equal(list.body.data[0].subject, 'Zipped');
  const broken = await f.s.api('POST', '/v1/mails/send', { raw: Buffer.from('not gzip at all'), headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' } });
  t.equal(broken.status, 400, 'a body that is not gzip is malformed');
  const br = await f.s.api('POST', '/v1/mails/send', { raw: Buffer.from('{}'), headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'br' } });
  t.equal(br.status, 415, 'an unsupported encoding is 415');
  t.equal(br.headers.get('accept-encoding'), 'gzip', 'naming the coding it would take (RFC 9110 §15.5.16)');
});

t.test('a gzip bomb (small compressed, over 20 MB inflated) is 413 with max_bytes', async (t) => {
  const f = await sendFixture(t);
  // 200 MB of spaces inside a JSON string compresses to about 200 KB.
  const bomb = zlib.gzipSync(Buffer.concat([Buffer.from('{"subject":"'), Buffer.alloc(200 * MB, 0x20), Buffer.from('"}')]), { level: 9 });
  t.ok(bomb.length < 1 * MB, 'the compressed body is small');
  const rssBefore = process.memoryUsage().rss;
  const r = await f.s.api('POST', '/v1/mails/send', { raw: bomb, headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' } });
  t.equal(r.status, 413);
  t.match(r.body, { code: 'request_too_large', max_bytes: 20 * MB });
  t.ok(process.memoryUsage().rss - rssBefore < 150 * MB, 'the service did not inflate the bomb in memory');
});

t.test('gzip: the 20 MB limit holds for the bytes transferred too, declared or streamed', async (t) => {
  const s = await startTestService(t);
  const { slug, key } = await s.tenant();
  const body = { sender_email: `sandbox@${slug}.sandbox.test`, to: [{ email: `a@${slug}.sandbox.test` }], subject: 'Padded', html: '<p>x</p>' };
  // A valid gzip member whose header carries a 21 MB comment (FCOMMENT): it inflates to a small,
  // valid send, so only the transferred size can refuse it.
  const plain = zlib.gzipSync(JSON.stringify(body));
  const padded = Buffer.concat([plain.subarray(0, 3), Buffer.from([plain[3] | 0x10]), plain.subarray(4, 10), Buffer.alloc(21 * MB, 0x61), Buffer.from([0]), plain.subarray(10)]);
  t.same(JSON.parse(zlib.gunzipSync(padded).toString()), body, 'the padded member is valid gzip');
  const headers = { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' };
  const declared = await s.api('POST', '/v1/mails/send', { raw: padded, headers });
  t.same([declared.status, declared.body.code, declared.body.max_bytes], [413, 'request_too_large', 20 * MB], 'with a Content-Length');
  const streamed = await new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = http.request(`${s.url}/v1/mails/send`, { method: 'POST', headers: { ...headers, Authorization: `Bearer ${key}`, 'X-Instance-Slug': slug } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    for (let at = 0; at < padded.length; at += MB) req.write(padded.subarray(at, at + MB));
    req.end();
  });
  t.same([streamed.status, streamed.body.code, streamed.body.max_bytes], [413, 'request_too_large', 20 * MB], 'chunked, counted while streaming');
  t.equal((await s.api('GET', '/v1/mails')).body.data.length, 0, 'nothing accepted');
});

t.test('a body over 20 MB is 413 request_too_large with max_bytes', async (t) => {
  const f = await sendFixture(t);
  const big = Buffer.concat([Buffer.from('{"subject":"'), Buffer.alloc(20 * MB, 0x61), Buffer.from('"}')]);
  const r = await f.s.api('POST', '/v1/mails/send', { raw: big, headers: { 'Content-Type': 'application/json' } });
  t.equal(r.status, 413);
  t.match(r.body, { code: 'request_too_large', max_bytes: 20 * MB });
});

/**
 * A raw HTTP/1.1 client on a real socket, for what fetch hides: when the answer comes relative to
 * the body, and whether the service resets or closes. `allowHalfOpen`: the service's FIN does not
 * stop it writing, as with a client that writes its whole body before it reads (Python's urllib).
 */
async function rawClient(t: { teardown(fn: () => unknown): void }, url: string, allowHalfOpen = false) {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ port: Number(port), host: hostname, allowHalfOpen });
  t.teardown(() => socket.destroy());
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const state = { answer: '', error: null as Error | null };
  socket.on('data', (d: Buffer) => (state.answer += d.toString('latin1')));
  socket.on('error', (err) => (state.error = err));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket, state, closed,
    /** Waits (up to 10 s) until the answer so far matches. */
    async until(re: RegExp): Promise<string> {
      for (let i = 0; i < 400 && !re.test(state.answer); i++) await new Promise((r) => setTimeout(r, 25));
      return state.answer;
    },
    /** Writes `body` in 1 MB pieces while the socket lives; returns the bytes written. */
    async upload(body: Buffer): Promise<number> {
      let written = 0;
      for (let at = 0; at < body.length && !socket.destroyed; at += MB) {
        const piece = body.subarray(at, at + MB);
        if (!socket.write(piece)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
        if (!socket.destroyed) written += piece.length;
      }
      return written;
    },
  };
}

t.test('a body refused for its size is read to its end: the client writing it gets the 413, and the connection serves the next request', async (t) => {
  const s = await startTestService(t);
  const { slug, key } = await s.tenant();
  const auth = `Authorization: Bearer ${key}\r\nX-Instance-Slug: ${slug}\r\n`;
  const c = await rawClient(t, s.url);
  const length = 20 * MB + 1;
  c.socket.write(`POST /v1/mails/send HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`);
  // The 413 comes as soon as the declared length is read, before any byte of the body.
  const refused = await c.until(/max_bytes/);
  t.match(refused, /^HTTP\/1\.1 413 /, 'refused before the body was sent');
  t.notMatch(refused, /connection: close/i, 'the connection is not closed under the upload');
  t.equal(await c.upload(Buffer.alloc(length, 0x61)), length, 'the whole body could be written');
  c.state.answer = '';
  c.socket.write(`GET /v1/mails HTTP/1.1\r\nHost: x\r\n${auth}\r\n`);
  t.match(await c.until(/"pagination"/), /^HTTP\/1\.1 200 /, 'the whole body was read and the same connection answers the next request');
  c.socket.end();
  await c.closed;
  t.equal(c.state.error, null, 'no reset, no EPIPE');
  t.equal((await s.api('GET', '/v1/mails')).body.data.length, 0, 'nothing accepted');
});

t.test('a client that asked for Connection: close also writes its whole body and reads the 413; the socket closes once the body ended', async (t) => {
  const s = await startTestService(t);
  const { slug, key } = await s.tenant();
  const c = await rawClient(t, s.url, true);
  const length = 20 * MB + 1;
  c.socket.write(`POST /v1/mails/send HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${key}\r\nX-Instance-Slug: ${slug}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`);
  await c.until(/"code"/);
  t.equal(await c.upload(Buffer.alloc(length, 0x61)), length, 'the whole body could be written after the service\'s FIN');
  if (!c.socket.destroyed) c.socket.end();
  await Promise.race([c.closed, new Promise((r) => setTimeout(r, 30_000))]); // generous: a loaded machine
  t.match(c.state.answer, /^HTTP\/1\.1 413 [\s\S]*connection: close[\s\S]*"max_bytes":20971520/i, 'the 413, saying the connection closes');
  t.equal(c.state.error, null, 'no EPIPE or reset while the body was written');
  t.ok(c.socket.destroyed || c.socket.readableEnded, 'closed by the service after the body');
});

t.test('Expect: 100-continue with a declared size over the limit gets the 413 instead of the 100; within it, the 100', async (t) => {
  const s = await startTestService(t);
  const { slug, key } = await s.tenant();
  const firstLine = async (length: number): Promise<string> => {
    const c = await rawClient(t, s.url);
    c.socket.write(`POST /v1/mails/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Instance-Slug: ${slug}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`);
    const answer = await c.until(/\r\n\r\n/);
    c.socket.destroy();
    return answer.split('\r\n')[0];
  };
  t.match(await firstLine(20 * MB + 1), /^HTTP\/1\.1 413 /, 'refused before the body is invited');
  t.equal(await firstLine(2 * MB), 'HTTP/1.1 100 Continue', 'a body within the limit is invited');
});

t.test('a gzip body found broken mid-upload is 400, and the rest of the body is read: the connection serves the next request', async (t) => {
  const s = await startTestService(t);
  const { slug, key } = await s.tenant();
  const body = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03]), Buffer.alloc(3 * MB, 0xff)]);
  const auth = `Authorization: Bearer ${key}\r\nX-Instance-Slug: ${slug}\r\n`;
  const c = await rawClient(t, s.url);
  c.socket.write(`POST /v1/mails/send HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${body.length}\r\n\r\n`);
  await c.upload(body);
  t.match(await c.until(/"code"/), /^HTTP\/1\.1 400 [\s\S]*malformed_request/, 'refused as malformed gzip');
  c.state.answer = '';
  c.socket.write(`GET /v1/mails HTTP/1.1\r\nHost: x\r\n${auth}\r\n`);
  t.match(await c.until(/"pagination"/), /^HTTP\/1\.1 200 /, 'the same connection answers the next request');
  t.equal(c.state.error, null, 'no reset');
});

function multipart(parts: { name: string; value?: string; filename?: string; type?: string; content?: Buffer }[]): { body: Buffer; type: string } {
  const boundary = 'estafeta-test-boundary';
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`;
    chunks.push(Buffer.from(head), p.content ?? Buffer.from(p.value ?? ''), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

t.test('multipart/form-data: JSON fields as strings, attachments as binary file parts', async (t) => {
  const f = await sendFixture(t);
  const fields = [
    { name: 'sender_email', value: f.sender },
    { name: 'to', value: JSON.stringify([{ email: f.rcpt('multi') }]) },
    { name: 'subject', value: 'With files' },
    { name: 'html', value: '<p>files</p>' },
    { name: 'headers', value: JSON.stringify({ 'X-Form': 'yes' }) },
    { name: 'test_mode', value: 'true' },
  ];
  const ok = multipart([...fields, { name: 'attachments', filename: 'bin.dat', type: 'application/octet-stream', content: Buffer.from([0, 1, 2, 255]) }]);
  const r = await f.s.api('POST', '/v1/mails/send', { raw: ok.body, headers: { 'Content-Type': ok.type } });
  t.equal(r.status, 200, r.text);
  const list = await f.s.api('GET', `/v1/mails?msg_id=${r.body.message_id}`);
  t.equal(list.body.data[0].subject, 'With files');

  const text = multipart([...fields, { name: 'attachments', value: 'not a file' }]);
  const bad = await f.s.api('POST', '/v1/mails/send', { raw: text.body, headers: { 'Content-Type': text.type } });
  t.equal(bad.status, 422, 'a text part named attachments');
  t.equal(bad.body.errors[0].pointer, '/attachments');

  // A text part is UTF-8 unless it names a charset: bytes that are not are malformed (as in JSON),
  // never stored with U+FFFD in their place.
  const latin1 = multipart([...fields.filter((p) => p.name !== 'subject'), { name: 'subject', content: Buffer.from([0x41, 0xff, 0xfe, 0x42]) }]);
  const before = (await f.s.api('GET', '/v1/mails')).body.data.length;
  const lr = await f.s.api('POST', '/v1/mails/send', { raw: latin1.body, headers: { 'Content-Type': latin1.type } });
  t.same([lr.status, lr.body.code], [400, 'malformed_request'], 'a text part that is not UTF-8');
  t.equal((await f.s.api('GET', '/v1/mails')).body.data.length, before, 'nothing stored');
  const named = multipart([...fields.filter((p) => p.name !== 'subject'), { name: 'subject', type: 'text/plain; charset=iso-8859-1', content: Buffer.from([0x4f, 0x6c, 0xe9]) }]);
  const nr = await f.s.api('POST', '/v1/mails/send', { raw: named.body, headers: { 'Content-Type': named.type } });
  t.equal(nr.status, 200, 'a part naming its charset is read in it');
  t.equal((await f.s.api('GET', `/v1/mails?msg_id=${nr.body.message_id}`)).body.data[0].subject, 'Olé');

  const badJson = multipart([...fields.filter((p) => p.name !== 'to'), { name: 'to', value: '[{"email":' }]);
  const bj = await f.s.api('POST', '/v1/mails/send', { raw: badJson.body, headers: { 'Content-Type': badJson.type } });
  t.equal(bj.status, 422);
  t.equal(bj.body.errors[0].pointer, '/to');

  // A file part's filename follows the JSON attachment's rules: a file name (not blank, not a
  // directory), at most 255 characters. busboy keeps a part's base name only: ".." is nothing.
  for (const [filename, code, partCode] of [['  ', 'string_pattern_mismatch'], ['..', 'string_pattern_mismatch', 'string_too_short'], ['n'.repeat(256), 'string_too_long']]) {
    const form = multipart([...fields, { name: 'attachments', filename, type: 'text/plain', content: Buffer.from('x') }]);
    const r = await f.s.api('POST', '/v1/mails/send', { raw: form.body, headers: { 'Content-Type': form.type } });
    t.same([r.status, r.body.errors?.[0]?.pointer, r.body.errors?.[0]?.code], [422, '/attachments/0/filename', partCode ?? code], `filename ${filename.slice(0, 5)}…`);
    const json = await f.send({ attachments: [{ type: 'text/plain', filename, content: 'eA==' }] });
    t.same([json.status, json.body.errors?.[0]?.code], [422, code], 'the same in JSON');
  }

  const empty = multipart([...fields, { name: 'attachments', filename: 'empty.txt', type: 'text/plain', content: Buffer.alloc(0) }]);
  const e = await f.s.api('POST', '/v1/mails/send', { raw: empty.body, headers: { 'Content-Type': empty.type } });
  t.same([e.status, e.body.errors?.[0]?.pointer, e.body.errors?.[0]?.code], [422, '/attachments/0/content', 'string_too_short'], 'a file part of no bytes, as an empty content in JSON');

  const huge = multipart([...fields, { name: 'attachments', filename: 'big.bin', type: 'application/octet-stream', content: Buffer.alloc(10 * MB + 1, 7) }]);
  const tooBig = await f.s.api('POST', '/v1/mails/send', { raw: huge.body, headers: { 'Content-Type': huge.type } });
  t.equal(tooBig.status, 413, 'a file part over 10 MB');
  t.equal(tooBig.body.code, 'request_too_large');
});
