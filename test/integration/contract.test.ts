import http from 'node:http';
import t from 'tap';
import { startTestService } from '../helpers/service';

// The spec's endpoint table ("Endpoints"): every one must be in the served contract.
const specEndpoints: Array<[string, string]> = [
  ['post', '/v1/mails/send'], ['get', '/v1/mails'], ['get', '/v1/mails/{mail_id}'], ['get', '/v1/mails/{mail_id}/logs'],
  ['get', '/v1/activities/sent'], ['get', '/v1/activities/opens'],
  ['get', '/v1/domains'], ['get', '/v1/domains/{id}'], ['get', '/v1/domains/{domain_name}/status'], ['post', '/v1/domains/{id}/validate'],
  ['get', '/v1/senders'], ['get', '/v1/senders/{id}'], ['get', '/v1/senders/search/names'], ['get', '/v1/senders/search/emails'],
  ['get', '/v1/mail-templates'], ['get', '/v1/mail-templates/{template_id}'], ['get', '/v1/fields'], ['get', '/v1/forms'], ['get', '/v1/forms/{id}'],
  ['get', '/v1/consent-terms'], ['get', '/v1/consent-purposes'], ['get', '/v1/consent-events'], ['post', '/v1/consent-events'],
  ['get', '/v1/consent-rules/resolve'],
];

t.test('GET / links the docs and the contract; both are public', async (t) => {
  const s = await startTestService(t);
  const root = await s.api('GET', '/', { key: null, slug: null });
  t.equal(root.status, 200);
  t.equal(root.body.links.docs, '/docs');
  t.equal(root.body.links.openapi, '/openapi.json');
  const docs = await s.api('GET', '/docs', { key: null, slug: null });
  t.equal(docs.status, 200);
  t.match(docs.headers.get('content-type'), /text\/html/);
  // Every asset the page loads is served locally: the UI works with no network.
  for (const src of docs.text.match(/(?:src|href)="([^"]+)"/g) ?? []) {
    const url = src.replace(/^(?:src|href)="|"$/g, '');
    t.match(url, /^\/docs\//, `${url} is local`);
    const asset = await s.api('GET', url, { key: null, slug: null });
    t.equal(asset.status, 200, url);
    t.ok(asset.text.length > 0, url);
  }
  t.equal((await s.api('GET', '/docs/..%2Fpackage.json', { key: null, slug: null })).status, 404);
  // Sent as written (fetch would resolve the dot segments before sending them).
  const rawGet = (target: string): Promise<{ status: number; body: string }> => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: new URL(s.url).port, path: target }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
  for (const dir of ['/docs/.', '/docs/..', '/docs/%2e', '/docs/%2e%2e']) {
    const r = await rawGet(dir);
    t.same([r.status, JSON.parse(r.body).code], [404, 'not_found'], `${dir}: a directory is no asset`);
  }
});

t.test('/openapi.json is OpenAPI 3.1 built from schema/ and lists every endpoint of the spec', async (t) => {
  const s = await startTestService(t);
  const res = await s.api('GET', '/openapi.json', { key: null, slug: null });
  t.equal(res.status, 200);
  const doc = res.body;
  t.equal(doc.openapi, '3.1.0');
  for (const [method, path] of specEndpoints) t.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`);
  t.ok(doc.components.schemas.Domain, 'resource schemas are components');
  t.ok(doc.components.schemas.Problem);
  // A $ref anywhere points at a component that exists.
  const refs = JSON.stringify(doc).match(/"\$ref":"#\/components\/schemas\/([^"]+)"/g) ?? [];
  for (const r of new Set(refs)) {
    const name = r.replace(/.*schemas\//, '').replace(/"$/, '');
    t.ok(doc.components.schemas[name], `${name} is defined`);
  }
  const senders = doc.paths['/v1/senders'].get;
  t.same(senders.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name).sort(),
    ['email', 'is_domain_verified', 'name', 'page', 'page_size']);
  t.equal(senders['x-scope'], 'senders:read');
});

t.test('/healthz and /metrics need no credentials', async (t) => {
  const s = await startTestService(t);
  t.same((await s.api('GET', '/healthz', { key: null, slug: null })).body, { status: 'ok' });
  const metrics = await s.api('GET', '/metrics', { key: null, slug: null });
  t.equal(metrics.status, 200);
  t.match(metrics.text, /estafeta_http_requests_total/);
});

t.test('/openapi.json declares what the service answers: media types, headers, every status', async (t) => {
  const s = await startTestService(t);
  await s.tenant();
  const doc = (await s.api('GET', '/openapi.json', { key: null, slug: null })).body;
  const ops = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((p) => Object.values(p));
  for (const op of ops) {
    t.equal(op.responses['401']?.headers?.['WWW-Authenticate']?.schema?.const, 'Bearer', `${op.operationId}: 401 carries WWW-Authenticate`);
    t.match(op.responses['403']?.description, /ip_not_allowed/, `${op.operationId}: 403 ip_not_allowed`);
    t.ok(op.responses.default?.content?.['application/problem+json'], `${op.operationId}: default (404 route, 405, 500)`);
    for (const [status, r] of Object.entries(op.responses as Record<string, any>)) t.ok(r.headers?.['X-Request-Id'], `${op.operationId} ${status}: X-Request-Id`);
    if (op.requestBody) t.ok(op.responses['413'], `${op.operationId}: a body can be too large`);
  }
  const send = doc.paths['/v1/mails/send'].post;
  t.ok(send.responses['429'].headers['Retry-After'], '429 carries Retry-After');
  const form = send.requestBody.content['multipart/form-data'];
  t.equal(form.schema.properties.attachments.items.contentMediaType, 'application/octet-stream', 'multipart: binary file parts');
  t.equal(form.schema.properties.to.contentMediaType, 'application/json', 'multipart: arrays as JSON strings');
  t.equal(form.schema.properties.reply_to.contentMediaType, 'application/json', 'multipart: an "object or null" as a JSON string too');
  t.match(send.requestBody.description, /Content-Encoding: gzip/, 'gzip bodies are part of the contract (spec, alternative encodings)');
  t.ok(doc.paths['/v1/activities/sent/export'].get.responses['200'].content['text/csv'], 'exports are CSV by default');
  const pageSize = (path: string) => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'page_size').schema.default;
  t.same([pageSize('/v1/mails'), pageSize('/v1/mail-templates')], [20, 10], 'page_size defaults');
  t.ok(doc.paths['/v1/mails'].get.parameters.some((p: { name: string }) => p.name === 'recipient_operator'), 'GET /v1/mails takes recipient_operator (spec, Text filters)');
  t.same(doc.components.schemas.Problem.properties.max_bytes?.type, 'integer', 'the 413 and 402 members are in Problem');

  // What the document says, the service does.
  const bogus = await s.api('GET', '/v1/mails?recipient=a&recipient_operator=like');
  t.same([bogus.status, bogus.body.code], [422, 'validation_error'], 'recipient_operator is validated on GET /v1/mails too');
  const noQuery = await s.api('GET', '/v1/mails/20260101.nope?x=%zz');
  t.same([noQuery.status, noQuery.body.code], [404, 'mail_not_found'], 'a route that reads no query ignores a malformed one (it declares no 400)');
  const csv = await s.api('GET', '/v1/activities/sent/export');
  t.match(csv.headers.get('content-type'), /^text\/csv/);
});
