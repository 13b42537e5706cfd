// The header-name table (src/accept/mime-header-keys.ts) must give exactly nodemailer's own
// normalization, for the names it remembers and for those past its capacity, and the pooled
// random part of boundaries (assemble.ts, from lib/tokens.ts's pool) must differ from message
// to message.
import t from 'tap';
import MimeNode from 'nodemailer/lib/mime-node';
import { buildMessage } from '../../../src/accept/assemble';

type Normalizing = { _normalizeHeaderKey(key: unknown): string };
const node = new MimeNode('text/plain') as unknown as Normalizing;

// What nodemailer 10's MimeNode#_normalizeHeaderKey answers (its source: control characters,
// whitespace and colons dropped, Camel-Case, MIME/DKIM/ARC/BIMI and -ID/-SPF/-FBL/-MD5 upper).
const expected: [unknown, string][] = [
  ['x-api-id', 'X-Api-ID'], ['mime-version', 'MIME-Version'], ['content-features', 'Content-features'],
  ['dkim-signature', 'DKIM-Signature'], ['x-smtpapi', 'X-SMTPAPI'], ['otp-token', 'OTP-Token'],
  ['received-spf', 'Received-SPF'], ['content-md5', 'Content-MD5'], ['From: ceo@example.com (', 'Fromceo@example.com('],
  ['LIST-unsubscribe', 'List-Unsubscribe'], [undefined, ''], [42, '42'],
];

t.test('known names, asked twice (the second answer comes from the table)', async (t) => {
  for (const [key, want] of expected) {
    t.equal(node._normalizeHeaderKey(key), want, `${String(key)} first`);
    t.equal(node._normalizeHeaderKey(key), want, `${String(key)} again`);
  }
});

t.test('past the table capacity names are still normalized', async (t) => {
  for (let i = 0; i < 1500; i++) node._normalizeHeaderKey(`x-filler-${i}`);
  t.equal(node._normalizeHeaderKey('x-late-arrival-id'), 'X-Late-Arrival-ID');
  t.equal(node._normalizeHeaderKey('x-filler-1499'), 'X-Filler-1499');
});

t.test('each message gets its own boundaries', async (t) => {
  const parts = {
    from: { address: 'a@example.test', name: '' }, to: [{ address: 'b@example.test', name: '' }], cc: [], replyTo: null,
    subject: 's', html: '<p>h</p>', text: 't', headers: {}, attachments: [], messageId: '<m@x>', at: Date.UTC(2026, 10, 27),
  };
  const boundaries = new Set<string>();
  let without = 0;
  for (let i = 0; i < 600; i++) { // 4,800 bytes: crosses a refill of the 4 KiB random pool
    const m = /boundary="([^"]+)"/.exec((await buildMessage(parts)).toString('latin1'));
    if (m) boundaries.add(m[1]);
    else without++;
  }
  t.equal(without, 0, 'every message is multipart/alternative with a boundary');
  t.equal(boundaries.size, 600, 'no boundary repeats');
});
