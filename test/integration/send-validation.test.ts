import t from 'tap';
import { sendFixture } from './send-fixture';

const b64 = (n: number): string => Buffer.alloc(n, 1).toString('base64');

t.test('every contract violation is a 422 whose errors[] point at the field', async (t) => {
  const f = await sendFixture(t);
  const many = Array.from({ length: 51 }, (_, i) => ({ email: f.rcpt(`r${i}`) }));
  const cases: [string, Record<string, unknown>, string, RegExp?][] = [
    ['subject missing without template_id', { subject: undefined }, '/subject'],
    ['html missing without template_id', { html: undefined }, '/html'],
    ['subject sent with template_id', { template_id: 1, html: undefined }, '/subject', /template_id/],
    ['html sent with template_id', { template_id: 1, subject: undefined }, '/html', /template_id/],
    ['text sent with template_id', { template_id: 1, subject: undefined, html: undefined, text: 'x' }, '/text'],
    ['a template_id past 2^53 - 1 (JSON cannot carry it exactly)', { template_id: 2 ** 53 + 2, subject: undefined, html: undefined }, '/template_id'],
    ['subject over 254 characters', { subject: 'x'.repeat(255) }, '/subject'],
    ['a lone surrogate (valid JSON, no UTF-8 text) in custom_msg_id', { custom_msg_id: 'a\udc00' }, '/custom_msg_id'],
    ['a lone surrogate in a header value', { headers: { 'X-Note': '\ud800x' } }, '/headers/X-Note'],
    ['a NUL in custom_msg_id (no query filter could find it again)', { custom_msg_id: 'id\u0000x' }, '/custom_msg_id'],
    ['empty subject', { subject: '' }, '/subject'],
    ['empty html', { html: '' }, '/html'],
    ['empty text', { text: '' }, '/text'],
    ['more than 50 recipients', { to: many.slice(0, 30), cc: many.slice(30, 45), bcc: many.slice(45) }, '/to'],
    ['no recipient', { to: [] }, '/to'],
    ['invalid to address', { to: [{ email: 'not-an-address' }] }, '/to/0/email'],
    ['invalid cc address', { cc: [{ email: 'a@@b' }] }, '/cc/0/email'],
    ['invalid bcc address', { bcc: [{ email: 'x y@example.com' }] }, '/bcc/0/email'],
    ['invalid reply_to', { reply_to: { email: 'nope' } }, '/reply_to/email'],
    ['a C1 control (NEL, a line break to some readers) in an address', { to: [{ email: 'nel\u0085x@example.com' }] }, '/to/0/email'],
    ['an IDN address of 245 characters, 725 in the ASCII form it is sent in', { to: [{ email: `a@${Array.from({ length: 80 }, () => 'ää').join('.')}.com` }] }, '/to/0/email'],
    ['a Unicode line separator in an address', { reply_to: { email: 'a\u2028b@example.com' } }, '/reply_to/email'],
    ['one header twice, in two cases', { headers: { 'X-Tag': 'a', 'x-tag': 'b' } }, '/headers/x-tag'],
    ['invalid sender_email', { sender_email: 'nope' }, '/sender_email'],
    ['more than 15 headers', { headers: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`X-H${i}`, 'v'])) }, '/headers'],
    ['a structure header', { headers: { From: 'a@b.test' } }, '/headers/From', /sender_email/],
    ['Reply-To as a header', { headers: { 'Reply-To': 'a@b.test' } }, '/headers/Reply-To', /reply_to/],
    ['Bcc as a header', { headers: { bcc: 'a@b.test' } }, '/headers/bcc', /bcc/],
    ['a platform header', { headers: { 'Message-ID': '<a@b>' } }, '/headers/Message-ID', /custom_msg_id/],
    ['List-Unsubscribe', { headers: { 'List-Unsubscribe': '<mailto:a@b>' } }, '/headers/List-Unsubscribe'],
    ['the x-svc- prefix', { headers: { 'X-Svc-Category': 'a' } }, '/headers/X-Svc-Category', /category/],
    ['a header name over 126', { headers: { ['X-' + 'a'.repeat(125)]: 'v' } }, `/headers/X-${'a'.repeat(125)}`],
    ['a header name with a space', { headers: { 'X Bad': 'v' } }, '/headers/X Bad'],
    ['a header value over 995', { headers: { 'X-Long': 'v'.repeat(996) } }, '/headers/X-Long'],
    ['name plus value over 996', { headers: { 'X-Long': 'v'.repeat(991) } }, '/headers/X-Long'],
    ['a header value with a line break', { headers: { 'X-Inject': 'a\r\nBcc: x@y.test' } }, '/headers/X-Inject'],
    ['In-Reply-To with a Unicode line separator (written unencoded)', { headers: { 'In-Reply-To': '<a@b>\u2028X-Inj: x' } }, '/headers/In-Reply-To'],
    ['References with a non-ASCII id', { headers: { References: '<é@b>' } }, '/headers/References'],
    ['Content-ID with a non-ASCII id', { headers: { 'Content-ID': '<é@b>' } }, '/headers/Content-ID'],
    ['attachment filename holding an encoded word', { attachments: [{ type: 'text/plain', filename: 'a.txt =?utf-8?Q?a=0D=0AX-Inj:_q?=', content: 'aGVsbG8=' }] }, '/attachments/0/filename'],
    ['attachment not strict base64', { attachments: [{ type: 'text/plain', filename: 'a.txt', content: 'aGVsbG8=\n' }] }, '/attachments/0/content'],
    ['attachment type not type/subtype', { attachments: [{ type: 'text', filename: 'a.txt', content: 'aGVsbG8=' }] }, '/attachments/0/type'],
    ['attachment with an empty filename', { attachments: [{ type: 'text/plain', filename: '', content: 'aGVsbG8=' }] }, '/attachments/0/filename'],
    ['attachment with a blank filename', { attachments: [{ type: 'text/plain', filename: '  ', content: 'aGVsbG8=' }] }, '/attachments/0/filename'],
    ['attachment filename with a path', { attachments: [{ type: 'text/plain', filename: '../r.pdf', content: 'aGVsbG8=' }] }, '/attachments/0/filename'],
    ['attachment filename with a backslash path', { attachments: [{ type: 'text/plain', filename: 'C:\\x\\r.pdf', content: 'aGVsbG8=' }] }, '/attachments/0/filename'],
    ['attachment filename ..', { attachments: [{ type: 'text/plain', filename: '..', content: 'aGVsbG8=' }] }, '/attachments/0/filename'],
    ['a message/rfc822 attachment with a NUL byte (sent unencoded, RFC 2046)', { attachments: [{ type: 'message/rfc822', filename: 'm.eml', content: Buffer.from('Subject: x\r\n\r\na\u0000b\r\n').toString('base64') }] }, '/attachments/0/content'],
    ['a message/rfc822 attachment with a 999-byte line', { attachments: [{ type: 'message/rfc822', filename: 'm.eml', content: Buffer.from(`Subject: x\r\n\r\n${'a'.repeat(999)}\r\n`).toString('base64') }] }, '/attachments/0/content'],
    ['a long blank filename that ends in a slash (read in one pass)', { attachments: [{ type: 'text/plain', filename: `${' '.repeat(120_000)}/`, content: 'aGVsbG8=' }] }, '/attachments/0/filename'],
    ['attachment filename with a line break', { attachments: [{ type: 'text/plain', filename: 'a\r\nX-Evil: 1', content: 'aGVsbG8=' }] }, '/attachments/0/filename'],
    ['a header with an empty value', { headers: { 'X-Empty': '' } }, '/headers/X-Empty', /X-Empty/],
    ['attachment with empty content', { attachments: [{ type: 'text/plain', filename: 'a', content: '' }] }, '/attachments/0/content'],
    ['more than 20 attachments', { attachments: Array.from({ length: 21 }, () => ({ type: 'text/plain', filename: 'a', content: 'aGk=' })) }, '/attachments'],
    ['attachments over 10 MB decoded', { attachments: [{ type: 'application/octet-stream', filename: 'a', content: b64(6 * 1024 * 1024) }, { type: 'application/octet-stream', filename: 'b', content: b64(4 * 1024 * 1024 + 1) }] }, '/attachments'],
    ['html over 5 MB in UTF-8 bytes', { html: 'é'.repeat(2.5 * 1024 * 1024 + 1) }, '/html'],
    ['a category without letter or digit', { category: '--- !!' }, '/category'],
    ['a category over 255', { category: 'a'.repeat(256) }, '/category'],
    ['custom_msg_id over 254', { custom_msg_id: 'a'.repeat(255) }, '/custom_msg_id'],
    ['an unknown field', { colour: 'red' }, '/colour'],
  ];
  for (const [name, overrides, pointer, message] of cases) {
    const r = await f.send(overrides);
    t.equal(r.status, 422, name);
    t.equal(r.body.code, 'validation_error', name);
    const item = (r.body.errors ?? []).find((e: any) => e.pointer === pointer);
    t.ok(item, `${name}: an error at ${pointer} (got ${JSON.stringify(r.body.errors)})`);
    if (message && item) t.match(item.message, message, `${name}: the message names the field to use`);
  }
  const list = await f.s.api('GET', '/v1/mails');
  t.equal(list.body.data.length, 0, 'nothing was accepted');
});

t.test('lengths are counted in characters (code points), as JSON Schema counts them: an emoji is one', async (t) => {
  const f = await sendFixture(t);
  const emoji = (n: number): string => '\u{1F600}'.repeat(n);
  for (const [field, max] of [['custom_msg_id', 254], ['custom_group_code', 254], ['category', 255]] as const) {
    const value = field === 'category' ? '\u{1D400}'.repeat(max) : emoji(max); // MATHEMATICAL BOLD A folds to a letter
    t.equal((await f.send({ [field]: value })).status, 200, `${field}: ${max} astral characters`);
    const over = await f.send({ [field]: value + 'a' });
    t.same([over.status, over.body.errors?.[0]?.pointer, over.body.errors?.[0]?.params], [422, `/${field}`, { max_length: max }], `${field}: ${max + 1}`);
  }
  t.equal((await f.send({ headers: { X: emoji(995) } })).status, 200, 'a header value of 995 emoji');
  const value = await f.send({ headers: { X: emoji(996) } });
  t.same([value.status, value.body.errors?.[0]?.params], [422, { max_length: 995 }], 'a header value of 996');
  const both = await f.send({ headers: { ['X-' + 'a'.repeat(124)]: 'v'.repeat(871) } });
  t.same([both.status, both.body.errors?.[0]?.params], [422, { max_length: 996 }], 'name 126 + value 871: the 996 rule names its own limit');
});

t.test('a message/rfc822 attachment of lines up to 998 bytes is accepted', async (t) => {
  const f = await sendFixture(t);
  const eml = `Subject: x\n\n${'a'.repeat(998)}\n`;
  t.equal((await f.send({ attachments: [{ type: 'message/rfc822', filename: 'm.eml', content: Buffer.from(eml).toString('base64') }] })).status, 200);
});

t.test('one address given twice, in any case or list, is one mail', async (t) => {
  const f = await sendFixture(t);
  const r = await f.send({ to: [{ email: f.rcpt('dup') }, { email: f.rcpt('DUP') }], cc: [{ email: f.rcpt('dup') }], bcc: [{ email: f.rcpt('other') }] });
  t.equal(r.status, 200);
  const list = await f.s.api('GET', `/v1/mails?msg_id=${r.body.message_id}`);
  t.same(list.body.data.map((m: { to: string }) => m.to).sort(), [f.rcpt('dup'), f.rcpt('other')]);
});

t.test('one 422 lists every failing field, whether the schema or a rule of the send refuses it', async (t) => {
  const f = await sendFixture(t);
  const many = Array.from({ length: 51 }, (_, i) => ({ email: f.rcpt(`r${i}`) }));
  const pointers = async (body: Record<string, unknown>): Promise<string[]> => {
    const r = await f.send(body);
    t.equal(r.status, 422);
    return (r.body.errors as { pointer: string }[]).map((e) => e.pointer).sort();
  };
  t.same(await pointers({ subject: 'a'.repeat(255), to: many }), ['/subject', '/to']);
  t.same(await pointers({ text: '', headers: { From: 'x@y.test' }, to: [{ email: 'bad' }] }), ['/headers/From', '/text', '/to/0/email']);
  // A recipient the schema refuses still counts toward the 50 (it stands in as a valid one).
  t.same(await pointers({ to: [...many.slice(0, 50), { email: 42 }] }), ['/to', '/to/50/email']);
  // A refused template_id keeps the content rules as meant: no "missing html" for a template send.
  t.same(await pointers({ template_id: 'seven', subject: undefined, html: undefined }), ['/template_id']);
  t.same(await pointers({ attachments: [{ type: 'text/plain', filename: 'a', content: 'not base64!' }], category: '!!!' }), ['/attachments/0/content', '/category']);
  // Within one recipient, reply_to or attachment, each member is its own field.
  t.same(await pointers({ to: [{ email: 'bad', name: 5 }] }), ['/to/0/email', '/to/0/name']);
  t.same(await pointers({ cc: [{ email: 'bad', x: 1 }] }), ['/cc/0/email', '/cc/0/x']);
  t.same(await pointers({ reply_to: { email: 'nope', name: [] } }), ['/reply_to/email', '/reply_to/name']);
  t.same(await pointers({ attachments: [{ type: 'x', content: '@@', filename: 'f' }] }), ['/attachments/0/content', '/attachments/0/type']);
  // C1 controls are control characters too; a type's names are at most 127 characters (RFC 6838),
  // or its header line would pass what SMTP carries.
  t.same(await pointers({ attachments: [{ type: 'text/plain', content: 'aGk=', filename: 'f\u0085.txt' }, { type: `a/${'b'.repeat(128)}`, content: 'aGk=', filename: 'g.txt' }] }),
    ['/attachments/0/filename', '/attachments/1/type']);
  // A required field left out does not hide the others.
  t.same(await pointers({ sender_email: undefined, subject: undefined, html: undefined }), ['/html', '/sender_email', '/subject']);
  t.same(await pointers({ sender_email: undefined, to: undefined, html: undefined }), ['/html', '/sender_email', '/to']);
  const once = await f.send({ subject: 'a'.repeat(255) });
  t.equal(once.body.errors.filter((e: { pointer: string }) => e.pointer === '/subject').length, 1, 'a field is reported once');
});

t.test('a body that is not JSON is 400, another content type 415', async (t) => {
  const f = await sendFixture(t);
  // The large bodies are built before the first request: building one blocks this process for
  // seconds on a loaded machine, past the server's keep-alive timeout, and the next request
  // would go out on a connection the server has just closed (ECONNRESET).
  const valid = { sender_email: f.sender, to: [{ email: f.rcpt('ana') }], subject: 'Hello', html: '<p>Hello</p>' };
  const keys = (n: number, name: (i: number) => string, value: unknown) => Object.fromEntries(Array.from({ length: n }, (_, i) => [name(i), value]));
  const wideBody = JSON.stringify({ ...valid, ...keys(150_000, (i) => `k${i}`, 1) });
  const widerBody = JSON.stringify({ ...valid, ...keys(1_000_000, (i) => `k${i}`, 1) });
  const headersBody = JSON.stringify({ ...valid, headers: keys(300_000, (i) => `h/${i}`, 'v') });
  const post = (raw: string) => f.s.api('POST', '/v1/mails/send', { raw, headers: { 'Content-Type': 'application/json' } });
  const bad = await f.s.api('POST', '/v1/mails/send', { raw: '{"to": [', headers: { 'Content-Type': 'application/json' } });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'malformed_request');
  const xml = await f.s.api('POST', '/v1/mails/send', { raw: '<x/>', headers: { 'Content-Type': 'application/xml' } });
  t.equal(xml.status, 415);
  const empty = await f.s.api('POST', '/v1/mails/send', { raw: '', headers: { 'Content-Type': 'application/json' } });
  t.same([empty.status, empty.body.code], [400, 'malformed_request'], 'an empty body is not valid JSON');
  const scalar = await f.s.api('POST', '/v1/mails/send', { raw: '"just a string"', headers: { 'Content-Type': 'application/json' } });
  t.same([scalar.status, scalar.body.code], [422, 'validation_error'], 'valid JSON of the wrong type is a schema error');
  // A "__proto__" key is valid JSON that no schema allows: 422 naming it, on whatever object it sits.
  for (const [raw, pointer] of [
    [`{"sender_email":"${f.sender}","to":[{"email":"${f.rcpt('a')}"}],"subject":"s","html":"h","__proto__":{"x":1}}`, '/__proto__'],
    [`{"sender_email":"${f.sender}","to":[{"email":"${f.rcpt('a')}","__proto__":{}}],"subject":"s","html":"h"}`, '/to/0/__proto__'],
  ]) {
    const proto = await f.s.api('POST', '/v1/mails/send', { raw, headers: { 'Content-Type': 'application/json' } });
    t.same([proto.status, proto.body.errors?.[0]?.pointer, proto.body.errors?.[0]?.code], [422, pointer, 'extra_forbidden'], pointer);
  }
  // A million bad recipients or 200,000 unknown fields (a few MB of JSON) are read no further
  // than the first thousand: a prompt 422 that still names the count rule, not a million items.
  const many = await f.s.api('POST', '/v1/mails/send', { raw: `{"sender_email":"${f.sender}","to":[${Array(1_000_000).fill(1).join(',')}],"subject":"s","html":"h"}`, headers: { 'Content-Type': 'application/json' } });
  t.equal(many.status, 422);
  t.ok(many.body.errors.length <= 1002, `${many.body.errors.length} items`);
  t.ok(many.body.errors.some((e: { pointer: string }) => e.pointer === '/to'), 'the recipient count rule at /to');
  const wide = await post(wideBody);
  t.same([wide.status, wide.body.errors.length <= 1002, wide.body.errors[0]?.code], [422, true, 'extra_forbidden']);
  // Past 200,000 values (parsing and validating a million keys held the one loop for seconds):
  // one 422 before parsing, naming the member that holds them.
  const wider = await post(widerBody);
  t.same([wider.status, wider.body.errors], [422, [{ pointer: '', code: 'value_error.size', message: 'The body holds more than 200000 values; no request of the API has as many' }]], 'a million keys');
  const headers = await post(headersBody);
  t.same([headers.status, headers.body.errors?.[0]?.pointer], [422, '/headers'], '300,000 headers: /headers');
  // Nested far deeper than any call stack, or than any request (JSON.parse would build 10 million
  // arrays from 20 MB of brackets, seconds of the one event loop): one 422 before parsing.
  const deep = `{"sender_email":"${f.sender}","a":${'['.repeat(200_000)}1${']'.repeat(200_000)},"__proto__":1}`;
  const nested = await f.s.api('POST', '/v1/mails/send', { raw: deep, headers: { 'Content-Type': 'application/json' } });
  t.same([nested.status, nested.body.errors?.[0]?.pointer, nested.body.errors?.[0]?.code], [422, '', 'value_error.depth'], 'a body nested 200,000 levels deep');
  for (const broken of ['['.repeat(40), `{"a":${'['.repeat(40)}garbage`, '[{]}'.repeat(20)]) {
    const res = await f.s.api('POST', '/v1/mails/send', { raw: broken, headers: { 'Content-Type': 'application/json' } });
    t.same([res.status, res.body.code], [400, 'malformed_request'], `deep and not JSON: 400 (${broken.slice(0, 12)}...)`);
  }
  const shallow = `{"sender_email":"${f.sender}","a":${'['.repeat(30)}1${']'.repeat(30)},"b":"${'['.repeat(100)}","__proto__":1}`;
  const within = await f.s.api('POST', '/v1/mails/send', { raw: shallow, headers: { 'Content-Type': 'application/json' } });
  t.same([within.status, within.body.errors?.[0]?.pointer], [422, '/__proto__'], 'within the depth (brackets in strings do not count): judged by its schema');
  const form = new FormData();
  form.set('sender_email', f.sender);
  form.set('to', `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
  const deepField = await f.s.api('POST', '/v1/mails/send', { raw: form as unknown as string });
  t.same([deepField.status, deepField.body.errors?.find((e: { pointer: string }) => e.pointer === '/to')?.code], [422, 'json_invalid'], 'a multipart JSON field nested as deep');
  // Header names are looked up as own keys: Object's prototype names no reserved header.
  const proto = await f.send({ headers: { constructor: 'x', toString: 'y' } });
  t.equal(proto.status, 200, JSON.stringify(proto.body));
  const consent = await f.s.api('POST', '/v1/consent-events', { raw: '', headers: { 'Content-Type': 'application/json' } });
  t.same([consent.status, consent.body.code], [400, 'malformed_request'], 'the same on every JSON route');
});

t.test('the send needs the mail:send scope', async (t) => {
  const f = await sendFixture(t);
  const k = await f.s.cli('apikey', 'create', f.slug, '--scopes', 'mail:read', '--json');
  const r = await f.s.api('POST', '/v1/mails/send', { key: k.json.api_key, body: { sender_email: f.sender, to: [{ email: f.rcpt('a') }], subject: 's', html: 'h' } });
  t.equal(r.status, 403);
  const list = await f.s.api('GET', '/v1/mails', { key: k.json.api_key });
  t.equal(list.status, 200, 'mail:read lists');
});
