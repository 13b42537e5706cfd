import t from 'tap';
import { allVerified, sharedWorld, states } from './domains-fixture';

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const world = sharedWorld(t);
let n = 0;
const fixture = async () => (await world()).domain(`d${++n}.mail.example.com`);

for (const mode of ['silent', 'servfail', 'refused'] as const) {
  t.test(`a resolver that is ${mode} gives 503 naming DNS and leaves states and timestamps unchanged`, async (t) => {
    const f = await fixture();
    f.dns.setZone(f.zone());
    const first = await f.validate();
    t.same(states(first.body), allVerified);
    f.dns.setMode(mode);
    const res = await f.validate();
    t.equal(res.status, 503);
    t.equal(res.body.code, 'service_unavailable');
    t.match(res.body.detail, /DNS/);
    const after = await f.api('GET', `/v1/domains/${f.domain.id}`);
    const { updated_at: _u1, ...a } = after.body;
    const { updated_at: _u2, ...b } = first.body;
    t.same(a, b, 'every state and timestamp is as before');
    const cli = await f.s.cli('domain', 'validate', f.slug, f.name, '--json');
    t.not(cli.code, 0);
    t.equal(cli.json.code, 'service_unavailable');
  });
}

t.test('ownership is checked once: after success it is never queried again, even when removed', async (t) => {
  const f = await fixture();
  const ownershipHost = f.domain.dns_records.ownership_cname.host;
  const z = f.zone();
  delete z[ownershipHost];
  f.dns.setZone(z);
  const first = await f.validate();
  t.equal(first.body.ownership_verified_at, null, 'not proven while absent');
  t.same(states(first.body), allVerified, 'ownership does not condition verification');
  f.dns.setZone(f.zone());
  const second = await f.validate();
  t.match(second.body.ownership_verified_at, iso);
  t.equal(second.body.is_ownership_verified, true);
  f.dns.setZone(z);
  f.dns.queries.length = 0;
  const third = await f.validate();
  t.equal(third.body.ownership_verified_at, second.body.ownership_verified_at, 'written once');
  t.notOk(f.dns.queries.some((q) => q.name === ownershipHost), 'the ownership name is not queried again');
  t.ok(f.dns.queries.length > 0, 'the other records were queried');
});

t.test('the sandbox domain validates as verified without any DNS query', async (t) => {
  const f = await fixture();
  const list = await f.api('GET', '/v1/domains');
  const sandbox = list.body.data.find((d: any) => d.is_sandbox);
  t.equal(sandbox.domain, `${f.slug}.sandbox.test`);
  f.dns.queries.length = 0;
  const res = await f.api('POST', `/v1/domains/${sandbox.id}/validate`);
  t.equal(res.status, 200);
  t.same(states(res.body), allVerified);
  t.equal(res.body.is_verified, true);
  t.equal(res.body.is_sandbox, true);
  t.same(f.dns.queries, [], 'no query reached DNS');
});

t.test('validate, detail and status by name answer 404 domain_not_found for an unknown domain; a malformed id is 422', async (t) => {
  const f = await fixture();
  for (const [method, path] of [['POST', '/v1/domains/999999/validate'], ['GET', '/v1/domains/999999'], ['GET', '/v1/domains/nope.example.org/status']]) {
    const res = await f.api(method, path);
    t.equal(res.status, 404, path);
    t.equal(res.body.code, 'domain_not_found', path);
  }
  const bad = await f.api('POST', '/v1/domains/abc/validate');
  t.equal(bad.status, 422);
  t.equal(bad.body.code, 'validation_error');
  const cli = await f.s.cli('domain', 'validate', f.slug, 'nope.example.org', '--json');
  t.equal(cli.json.code, 'domain_not_found');
});

t.test('a domain of another instance is domain_not_found for validate', async (t) => {
  const f = await fixture();
  const other = await f.s.tenant();
  const res = await f.api('POST', `/v1/domains/${f.domain.id}/validate`, { key: other.key, slug: other.slug });
  t.equal(res.status, 404);
  t.equal(res.body.code, 'domain_not_found');
});

t.test('validate needs the domains:write scope', async (t) => {
  const f = await fixture();
  const k = await f.s.cli('apikey', 'create', f.slug, '--scopes', 'domains:read', '--json');
  const res = await f.api('POST', `/v1/domains/${f.domain.id}/validate`, { key: k.json.api_key });
  t.equal(res.status, 403);
  const read = await f.api('GET', `/v1/domains/${f.domain.id}`, { key: k.json.api_key });
  t.equal(read.status, 200);
});
