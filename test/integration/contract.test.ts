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
