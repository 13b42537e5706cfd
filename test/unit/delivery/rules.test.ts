import t from 'tap';
import { retryDelay, nextAttemptAt } from '../../../src/delivery/retry';
import { classifyReply, classifyError } from '../../../src/delivery/outcome';
import { rewriteEntity } from '../../../src/delivery/mime';
import { relaxedBody, relaxedHeader } from '../../../src/delivery/sign';

t.test('the retry delay follows the configured list and its last value repeats', async (t) => {
  const delays = [60, 300, 900];
  t.same([1, 2, 3, 4, 9].map((n) => retryDelay(n, delays)), [60, 300, 900, 900, 900]);
  t.equal(retryDelay(0, delays), 60, 'attempt numbers below 1 use the first delay');
});

t.test('a deferral past the maximum queue age has no next attempt, and the last try is at the expiry', async (t) => {
  const base = { receivedAt: 0, delays: [600], maxQueueAge: 1000 };
  t.equal(nextAttemptAt({ ...base, attempt: 1, now: 100_000 }), 700_000);
  t.equal(nextAttemptAt({ ...base, attempt: 1, now: 900_000 }), 1_000_000, 'capped at the expiry');
  t.equal(nextAttemptAt({ ...base, attempt: 2, now: 1_000_000 }), null, 'expired');
});

t.test('replies classify as sent, deferred or bounced; connection errors defer the site', async (t) => {
  t.match(classifyReply(250, '250 ok', 'message'), { kind: 'sent' });
  t.match(classifyReply(451, '451 later', 'message'), { kind: 'deferred' });
  t.match(classifyReply(550, '550 no', 'recipient'), { kind: 'bounced', restrict: true });
  t.match(classifyError(Object.assign(new Error('refused'), { code: 'ECONNECTION' })), { kind: 'deferred', scope: 'site' });
  t.match(classifyError(Object.assign(new Error('x'), { code: 'EENVELOPE', responseCode: 550, response: '550 5.1.1 unknown' })), { kind: 'bounced', scope: 'recipient' });
  t.match(classifyError(Object.assign(new Error('x'), { code: 'EAUTH', responseCode: 535, response: '535 bad' })), { kind: 'deferred' }, 'a relay refusing our AUTH is never a bounce');
  const mailFrom = (responseCode: number, response: string) => classifyError(Object.assign(new Error('x'), { code: 'EENVELOPE', command: 'MAIL FROM', responseCode, response }));
  t.match(mailFrom(530, '530 Error: authentication Required'), { kind: 'deferred', scope: 'site' }, 'a relay wanting AUTH we lack: our configuration');
  t.match(mailFrom(550, '550 5.7.1 sender refused'), { kind: 'bounced', restrict: true }, 'a permanent refusal of the sender is a permanent failure (CONTRACT §5)');
  t.match(mailFrom(451, '451 4.3.0 later'), { kind: 'deferred' });
});

t.test('rewriting html leaves keeps every other part byte for byte', async (t) => {
  const head = 'Content-Type: multipart/alternative; boundary="xx"';
  const text = 'Content-Type: text/plain\r\n\r\nplain =3D text';
  const html = 'Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>caf=C3=A9</p>';
  const body = `preamble\r\n--xx\r\n${text}\r\n--xx\r\n${html}\r\n--xx--\r\nepilogue`;
  const out = rewriteEntity(head, body, (h) => h.replace('</p>', ' ok</p>'));
  t.ok(out.body.startsWith(`preamble\r\n--xx\r\n${text}\r\n--xx\r\n`), 'preamble and text part untouched');
  t.ok(out.body.endsWith('\r\n--xx--\r\nepilogue'), 'epilogue untouched');
  const part = out.body.split('--xx')[2];
  t.match(part, /Content-Transfer-Encoding: base64/);
  const b64 = part.split('\r\n\r\n')[1].replace(/\s+/g, '');
  t.equal(Buffer.from(b64, 'base64').toString('utf8'), '<p>café ok</p>');
});

t.test('relaxed canonicalization collapses whitespace and trailing empty lines (RFC 6376 §3.4)', async (t) => {
  t.equal(relaxedHeader('Subject:  Hello \r\n\tWorld  '), 'subject:Hello World');
  t.equal(relaxedBody(Buffer.from('a  b \r\n\r\n\r\n')).toString(), 'a b\r\n');
  t.equal(relaxedBody(Buffer.from('')).toString(), '');
});
