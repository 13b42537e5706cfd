import t from 'tap';
import Database from 'better-sqlite3';
import path from 'node:path';
import net from 'node:net';
import { startTestService, waitFor } from '../helpers/service';

t.test('HTTP conventions of every response', async (t) => {
  const s = await startTestService(t);
  await s.tenant();

  t.test('X-Request-Id is echoed when sent and generated as a UUID otherwise, on success and error', async (t) => {
    const echoed = await s.api('GET', '/v1/senders', { headers: { 'X-Request-Id': 'req-123' } });
    t.equal(echoed.headers.get('x-request-id'), 'req-123');
    const generated = await s.api('GET', '/v1/nope');
    t.match(generated.headers.get('x-request-id'), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const unauth = await s.api('GET', '/v1/senders', { key: null });
    t.ok(unauth.headers.get('x-request-id'));
  });

  t.test('an unknown route is 404 not_found as problem+json', async (t) => {
    const res = await s.api('GET', '/v1/does-not-exist');
    t.equal(res.status, 404);
    t.match(res.headers.get('content-type'), /^application\/problem\+json/);
    t.match(res.body, { status: 404, code: 'not_found', type: /not-found$/, title: String, detail: String, trace_id: String });
    const top = await s.api('GET', '/nothing-here', { key: null, slug: null });
    t.equal(top.status, 404);
    t.equal(top.body.code, 'not_found');
  });

  t.test('a known path with a wrong verb is 405 with Allow', async (t) => {
    const res = await s.api('DELETE', '/v1/senders');
    t.equal(res.status, 405);
    t.equal(res.body.code, 'method_not_allowed');
    t.match(res.headers.get('allow'), /GET/);
    const detail = await s.api('PUT', '/v1/domains/1');
    t.equal(detail.status, 405);
    t.match(detail.headers.get('allow'), /GET/);
    // /v1/mails/send is its own path, not the mail whose id is "send".
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const send = await s.api(method, '/v1/mails/send');
      t.equal(send.status, 405, `${method} /v1/mails/send`);
      t.equal(send.body.code, 'method_not_allowed');
      t.equal(send.headers.get('allow'), 'POST');
    }
    // One trailing slash names the same path (the router is not strict): the same answers.
    const slashed = await s.api('GET', '/v1/mails/send/');
    t.same([slashed.status, slashed.headers.get('allow')], [405, 'POST'], 'GET /v1/mails/send/ is the send path, not the mail "send"');
    t.same((await s.api('DELETE', '/v1/mails/send/')).headers.get('allow'), 'POST', 'its Allow names only POST');
  });

  t.test('the dashboard operations take a user JWT: an API key with every scope is the wrong role (403)', async (t) => {
    for (const [method, path] of [['POST', '/v1/domains'], ['POST', '/v1/domains/1/send-dns-config'], ['DELETE', '/v1/domains/1'],
      ['POST', '/v1/senders'], ['GET', '/v1/senders/news@brand.test/stats'], ['DELETE', '/v1/senders/1'], ['POST', '/v1/private/api-keys'],
      ['GET', '/v1/private/domains']] as const) {
      const res = await s.api(method, path, method === 'POST' ? { body: {} } : {});
      t.equal(res.status, 403, `${method} ${path}`);
      t.equal(res.body.code, 'forbidden', `${method} ${path}`);
    }
    for (const path of ['/v1/domains/', '/v1/senders/']) {
      const res = await s.api('POST', path, { body: {} });
      t.same([res.status, res.body.code], [403, 'forbidden'], `POST ${path}: the same operation with a trailing slash`);
    }
    const anonymous = await s.api('POST', '/v1/domains', { key: null, slug: null, body: {} });
    t.equal(anonymous.status, 401, 'credentials first');
  });

  t.test('paths are case-sensitive: /V1/... is no route (404), for any caller', async (t) => {
    for (const opts of [{}, { key: null, slug: null }]) {
      const res = await s.api('GET', '/V1/mails', opts);
      t.equal(res.status, 404);
      t.equal(res.body.code, 'not_found');
    }
  });

  t.test('error bodies carry the request id; a client id with inner spaces is kept', async (t) => {
    const res = await s.api('GET', '/v1/does-not-exist', { headers: { 'X-Request-Id': 'req 42' } });
    t.equal(res.headers.get('x-request-id'), 'req 42');
    t.equal(res.body.request_id, 'req 42');
    const generated = await s.api('GET', '/v1/does-not-exist');
    t.equal(generated.body.request_id, generated.headers.get('x-request-id'));
  });

  t.test('an integer id no resource has is that resource\'s 404', async (t) => {
    for (const id of ['0', '-1', '1000000000000000', String(Number.MAX_SAFE_INTEGER)]) {
      const res = await s.api('GET', `/v1/domains/${id}`);
      t.equal(res.status, 404, id);
      t.equal(res.body.code, 'domain_not_found', id);
    }
    for (const id of ['9007199254740993', '9'.repeat(40)]) {
      const res = await s.api('GET', `/v1/domains/${id}`);
      t.same([res.status, res.body.errors?.[0]?.pointer, res.body.errors?.[0]?.code], [422, '/id', 'less_than_equal'], `${id}: past 2^53 - 1, not read exactly`);
    }
  });

  t.test('a malformed query parameter is 400 malformed_request; one read but outside the schema is 422', async (t) => {
    // Spec, Errors: 400 is "query parameter malformed, rejected before schema validation".
    for (const q of ['page=abc', 'is_domain_verified=maybe', 'page_size=', 'page=1&page=2']) {
      const res = await s.api('GET', `/v1/senders?${q}`);
      t.equal(res.status, 400, q);
      t.equal(res.body.code, 'malformed_request', q);
      t.equal(res.body.type, 'https://estafeta.dev/problems/malformed-request');
    }
    for (const [q, pointer, code, params] of [['page=0', '/page', 'greater_than_equal', { ge: 1 }], ['page_size=0', '/page_size', 'greater_than_equal', { ge: 1 }],
      ['page_size=101', '/page_size', 'less_than_equal', { le: 100 }]] as const) {
      const res = await s.api('GET', `/v1/senders?${q}`);
      t.same([res.status, res.body.code], [422, 'validation_error'], q);
      t.match(res.body.errors, [{ pointer, code, params }], `${q}: errors[] names the parameter`);
    }
  });

  t.test('a boolean query value may be spelled 1/0, yes/no, on/off in any case', async (t) => {
    const verified = await s.api('GET', '/v1/senders?is_domain_verified=true');
    const unverified = await s.api('GET', '/v1/senders?is_domain_verified=false');
    t.equal(verified.status, 200);
    t.not(JSON.stringify(verified.body.data), JSON.stringify(unverified.body.data), 'the two filters differ here');
    for (const q of ['1', 'TRUE', 'Yes', 'on']) t.same((await s.api('GET', `/v1/senders?is_domain_verified=${q}`)).body.data, verified.body.data, q);
    for (const q of ['0', 'False', 'no', 'OFF']) t.same((await s.api('GET', `/v1/senders?is_domain_verified=${q}`)).body.data, unverified.body.data, q);
  });

  t.test('a malformed path id is 422 naming the parameter', async (t) => {
    const res = await s.api('GET', '/v1/domains/abc');
    t.equal(res.status, 422);
    t.equal(res.body.code, 'validation_error');
    t.same(res.body.errors.map((e: { pointer: string }) => e.pointer), ['/id']);
  });

  t.test('pagination: page sizes, has_more, totals, and an empty page', async (t) => {
    const one = await s.api('GET', '/v1/senders?page=1&page_size=1');
    t.same(one.body.pagination, { page: 1, page_size: 1, has_more: false, total_items: 1, total_pages: 1 });
    const past = await s.api('GET', '/v1/senders?page=2&page_size=1');
    t.same(past.body.data, []);
    t.equal(past.body.pagination.has_more, false);
    const none = await s.api('GET', '/v1/senders?name=no-such-sender');
    t.same(none.body, { data: [], pagination: { page: 1, page_size: 20, has_more: false, total_items: 0, total_pages: 0 } });
  });

  t.test('text filters are partial, case-insensitive, with % and _ literal', async (t) => {
    t.equal((await s.api('GET', '/v1/senders?email=SANDBOX%40')).body.data.length, 1);
    t.equal((await s.api('GET', '/v1/senders?name=andb')).body.data.length, 1);
    t.equal((await s.api('GET', '/v1/senders?email=%25')).body.data.length, 0, '% matches only a literal %');
    t.equal((await s.api('GET', '/v1/senders?email=sand_ox')).body.data.length, 0, '_ matches only a literal _');
  });

  t.test('timestamps are RFC 3339 UTC with Z', async (t) => {
    const res = await s.api('GET', '/v1/domains/1');
    t.match(res.body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  t.test('a non-JSON body on a JSON route is 415, with or without bytes; an invalid JSON body is 400', async (t) => {
    for (const raw of ['hello', '']) {
      const res = await s.api('POST', '/v1/consent-events', { raw, headers: { 'Content-Type': 'text/plain' } });
      t.same([res.status, res.body.code], [415, 'unsupported_media_type'], `text/plain, ${raw.length} bytes`);
    }
    const json = { 'Content-Type': 'Application/JSON; charset=utf-8' };
    t.same((await s.api('POST', '/v1/consent-events', { raw: '', headers: json })).body.code, 'malformed_request', 'an empty JSON body');
    t.same((await s.api('POST', '/v1/consent-events', { raw: '{bad', headers: json })).body.code, 'malformed_request', 'broken JSON');
    // RFC 8259 §8.1: JSON is UTF-8. Latin-1 bytes are not JSON (400), never stored as U+FFFD.
    const latin1 = Buffer.concat([Buffer.from('{"term_id":1,"method":"single_opt_in","rules":[{"contact_type":"uniquecode","contact":"caf'), Buffer.from([0xe9]), Buffer.from('","purpose_id":1,"action":"allow"}]}')]);
    const bad = await s.api('POST', '/v1/consent-events', { raw: latin1, headers: { 'Content-Type': 'application/json' } });
    t.same([bad.status, bad.body.code], [400, 'malformed_request'], 'a body that is not UTF-8');
    for (const charset of ['iso-8859-1', 'utf-16']) {
      const res = await s.api('POST', '/v1/consent-events', { raw: '{}', headers: { 'Content-Type': `application/json; charset=${charset}` } });
      t.same([res.status, res.body.code], [415, 'unsupported_media_type'], `charset=${charset}: not a JSON this door reads`);
    }
    const utf8 = await s.api('POST', '/v1/consent-events', { raw: '{}', headers: { 'Content-Type': 'application/json; charset="UTF-8"' } });
    t.same(utf8.status, 422, 'charset=UTF-8 (quoted, any case) is JSON: the schema judges the body');
  });

  t.test('validate takes no body and never answers 400: one sent anyway is dropped unread, only its size bounded', async (t) => {
    for (const [raw, type] of [['hello', 'text/plain'], ['{bad', 'application/json'], ['['.repeat(40), 'application/json'], ['', 'application/json'], ['{}', 'application/json'], [' \r\n', 'application/octet-stream']]) {
      const res = await s.api('POST', '/v1/domains/1/validate', { raw, headers: { 'Content-Type': type } });
      t.equal(res.status, 200, `${type} ${JSON.stringify(raw.slice(0, 8))}`);
    }
    t.same((await s.api('POST', '/v1/domains/999/validate', { raw: '{bad', headers: { 'Content-Type': 'application/json' } })).body.code, 'domain_not_found', 'an unknown id is still 404');
    t.same((await s.api('POST', '/v1/domains/abc/validate', { raw: '{bad', headers: { 'Content-Type': 'application/json' } })).status, 422, 'a malformed id still 422');
    const big = await s.api('POST', '/v1/domains/1/validate', { raw: Buffer.alloc(20 * 1024 * 1024 + 1, 0x20), headers: { 'Content-Type': 'application/json' } });
    t.same([big.status, big.body.code, big.body.max_bytes], [413, 'request_too_large', 20971520], 'a body past the 20 MB limit');
  });
});

t.test('a query integer is decimal digits and the query string is valid percent-encoding, else 400', async (t) => {
  const s = await startTestService(t);
  await s.tenant();
  for (const q of ['page_size=1e1', 'page_size=0x5', 'page_size=5.0', 'page=%201%2E5', 'recipient=%zz', 'subject=%E0%A4%A']) {
    const res = await s.api('GET', `/v1/mails?${q}`);
    t.equal(res.status, 400, q);
    t.equal(res.body.code, 'malformed_request', q);
  }
  t.equal((await s.api('GET', '/v1/mails?page_size=5&page=%2B1&subject=a%2Bb+c')).status, 200, 'digits with a sign, and well-encoded text');
  for (const q of ['/v1/mails?sender_id=99999999999999999999', '/v1/consent-rules/resolve?contacts=a%40b.test&contact_types=email_address&purpose_id=9007199254740993']) {
    const res = await s.api('GET', q);
    t.same([res.status, res.body.code], [400, 'malformed_request'], `${q}: an integer past 2^53 is not the one written`);
  }
  for (const q of ['/v1/senders?name=%00', '/v1/senders?name=Team%00zzz', '/v1/mail-restrictions?recipient=a%00', '/v1/mails?subject=x%00']) {
    const nul = await s.api('GET', q);
    t.same([nul.status, nul.body.code], [400, 'malformed_request'], `${q}: a NUL, which SQLite's LIKE would read as the pattern's end`);
  }
  const typed = await s.api('POST', '/v1/mails/send', { body: { sender_email: 'x@y.test', to: [{ email: 'a@b.test' }], subject: 5, html: 'x' } });
  t.same(typed.body.errors.find((e: { pointer: string }) => e.pointer === '/subject')?.params, { expected: 'string, null' }, '422 params are plain scalars');
});

t.test('an internal failure is a generic 500 with a trace_id, the cause only in the log', async (t) => {
  const s = await startTestService(t);
  await s.tenant();
  // The environment breaks under the service (the table disappears): no module of ours is mocked.
  const db = new Database(path.join(s.dataDir, 'estafeta.db'));
  db.exec('ALTER TABLE senders RENAME TO senders_gone');
  db.close();
  const res = await s.api('GET', '/v1/senders');
  t.equal(res.status, 500);
  t.equal(res.body.code, 'internal_error');
  t.equal(res.body.detail, 'Internal server error.');
  t.match(res.body.trace_id, /^[0-9a-f]{32}$/);
  t.notMatch(res.text, /senders|sqlite|no such table/i);
});

/** One raw HTTP/1.1 exchange on a fresh connection: what a client that breaks the protocol gets. */
function rawExchange(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(request));
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

t.test('a request Node\'s parser refuses is still a problem+json with its X-Request-Id', async (t) => {
  const s = await startTestService(t);
  for (const [name, request, status, code] of [
    ['a 17,000-character URL', `GET /v1/mails?subject=${'a'.repeat(17_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414, 'uri_too_long'],
    ['17,000 bytes of headers', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`, 431, 'request_header_fields_too_large'],
    ['a method no registry knows', 'FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 501, 'not_implemented'],
    ['a malformed header line', 'GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n', 400, 'malformed_request'],
    ['Content-Length with chunked', 'POST /v1/mails/send HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'malformed_request'],
    ['no Host', 'GET /healthz HTTP/1.1\r\n\r\n', 400, 'malformed_request'],
    ['an expectation other than 100-continue', 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\n\r\n', 417, 'expectation_failed'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405, 'method_not_allowed'],
  ] as const) {
    const response = await rawExchange(s.url, request);
    const [head, body] = [response.slice(0, response.indexOf('\r\n\r\n')), response.slice(response.indexOf('\r\n\r\n') + 4)];
    t.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), name);
    t.match(head, /\r\nContent-Type: application\/problem\+json\r\n/i, name);
    const id = /\r\nX-Request-Id: ([0-9a-f-]{36})\r\n/i.exec(head)?.[1];
    t.ok(id, `${name}: X-Request-Id`);
    t.match(JSON.parse(body), { status, code, request_id: id, type: `https://estafeta.dev/problems/${code.replace(/_/g, '-')}` }, name);
    if (code === 'malformed_request') t.equal(JSON.parse(body).title, 'Malformed request', `${name}: the title every malformed_request carries`);
  }
  t.equal((await fetch(`${s.url}/healthz`)).status, 200, 'the server goes on');
});

// CONTRACT §1: a stop stops accepting. The listening socket closes, and a keep-alive connection
// must not go on bringing requests until the bound (it did: sends kept being acknowledged for
// the whole ESTAFETA_SHUTDOWN_TIMEOUT).
t.test('a request in flight at a stop is answered with Connection: close; nothing after it on that connection is served', async (t) => {
  const s = await startTestService(t);
  const { slug, key } = await s.tenant();
  const body = JSON.stringify({ sender_email: `sandbox@${slug}.sandbox.test`, to: [{ email: `a@${slug}.sandbox.test` }], subject: 's', html: '<p>h</p>' });
  const socket = net.connect(new URL(s.url).port as unknown as number, '127.0.0.1');
  t.teardown(() => socket.destroy());
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  // Expect: 100-continue: the 100 tells that the server has the request and runs its handler.
  socket.write(`POST /v1/mails/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Instance-Slug: ${slug}\r\n`
    + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`);
  await waitFor(() => received.startsWith('HTTP/1.1 100 '), { what: '100 Continue' });
  const stopped = s.stop();
  socket.write(`${body}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`); // the send's body, then a pipelined request
  await ended;
  await stopped;
  const responses = received.split(/(?=HTTP\/1\.1 \d{3} )/).filter((r) => !r.startsWith('HTTP/1.1 100 '));
  t.equal(responses.length, 1, 'one response after the 100: the pipelined request was not served');
  t.match(responses[0], /^HTTP\/1\.1 200 /, 'the send in flight is acknowledged');
  t.match(responses[0], /\r\nConnection: close\r\n/i, 'and its connection is closed');
});
