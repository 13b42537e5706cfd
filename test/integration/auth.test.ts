import t from 'tap';
import { startTestService } from '../helpers/service';

const strip = (body: Record<string, unknown>) => {
  const { trace_id: _t, request_id: _r, ...rest } = body;
  return rest;
};

t.test('every 401 cause looks the same: status, body and headers apart from ids', async (t) => {
  const s = await startTestService(t);
  const a = await s.tenant();
  const b = await s.tenant();
  const revoked = await s.cli('apikey', 'create', a.slug, '--json');
  t.equal((await s.cli('apikey', 'revoke', a.slug, revoked.json.key_id, '--json')).code, 0);
  const [prefix, keyId] = a.key.split('.');

  const causes: Record<string, { key?: string | null; slug?: string | null; headers?: Record<string, string> }> = {
    'missing Authorization': { key: null, slug: a.slug },
    'missing slug': { key: a.key, slug: null },
    'not a Bearer': { key: null, slug: a.slug, headers: { Authorization: `Basic ${a.key}` } },
    'malformed key': { key: 'not-a-key', slug: a.slug },
    'unknown key id': { key: `${prefix}.zzzzzzzzzzzzzzzz.${a.key.split('.')[2]}`, slug: a.slug },
    'wrong token': { key: `${prefix}.${keyId}.wrongtoken`, slug: a.slug },
    'revoked key': { key: revoked.json.api_key, slug: a.slug },
    'unknown slug': { key: a.key, slug: 'no-such-instance' },
    'key of another instance': { key: a.key, slug: b.slug },
  };
  let reference: { body: Record<string, unknown>; headers: string[] } | undefined;
  for (const [name, c] of Object.entries(causes)) {
    const res = await s.api('GET', '/v1/senders', c);
    t.equal(res.status, 401, name);
    t.equal(res.headers.get('www-authenticate'), 'Bearer', name);
    const headers = [...res.headers.keys()].filter((h) => !['date', 'x-request-id'].includes(h)).sort();
    const shape = { body: strip(res.body), headers };
    if (!reference) reference = shape;
    t.same(shape, reference, `${name} is indistinguishable`);
  }
  t.equal(reference?.body.code, 'unauthorized');
});

t.test('403 for a missing scope and a disabled instance; ip_not_allowed only for authorized callers', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const scoped = await s.cli('apikey', 'create', slug, '--scopes', 'domains:read', '--json');
  t.equal(scoped.json.access_type, 'scoped');
  t.same(scoped.json.scopes, ['domains:read']);
  t.equal((await s.api('GET', '/v1/domains', { key: scoped.json.api_key })).status, 200);
  const denied = await s.api('GET', '/v1/senders', { key: scoped.json.api_key });
  t.equal(denied.status, 403);
  t.equal(denied.body.code, 'forbidden');

  // The allow list of the key excludes loopback: an authorized call gets ip_not_allowed...
  const fenced = await s.cli('apikey', 'create', slug, '--scopes', 'domains:read', '--ip-allow', '10.0.0.0/8,2001:db8::/32', '--json');
  const fencedRes = await s.api('GET', '/v1/domains', { key: fenced.json.api_key });
  t.equal(fencedRes.status, 403);
  t.equal(fencedRes.body.code, 'ip_not_allowed');
  // ...but a call it is not authorized for stays the generic 403.
  t.equal((await s.api('GET', '/v1/senders', { key: fenced.json.api_key })).body.code, 'forbidden');

  // The instance allow list applies to every key; IPv6 and IPv4 CIDRs are accepted.
  t.equal((await s.cli('instance', 'limits', slug, '--ip-allow', '192.0.2.0/24,::1', '--json')).code, 0);
  t.equal((await s.api('GET', '/v1/domains')).body.code, 'ip_not_allowed');
  for (const [method, path] of [['GET', '/v1/nothing'], ['DELETE', '/v1/senders'], ['GET', '/v1/mails/send'], ['DELETE', '/v1/domains']] as const) {
    t.equal((await s.api(method, path)).body.code, 'ip_not_allowed', `${method} ${path}: the allow list answers before any 404 or 405`);
  }
  t.equal((await s.cli('instance', 'limits', slug, '--ip-allow', '127.0.0.0/8', '--json')).code, 0);
  t.equal((await s.api('GET', '/v1/domains')).status, 200);
  // An IPv4 range written in its IPv4-mapped IPv6 form is that IPv4 range (clients match as IPv4).
  const mapped = await s.cli('instance', 'limits', slug, '--ip-allow', '::ffff:127.0.0.1/128,::ffff:10.0.0.0/104', '--json');
  t.same(mapped.json.ip_allow, ['127.0.0.1/32', '10.0.0.0/8'], 'stored in IPv4 form');
  t.equal((await s.api('GET', '/v1/domains')).status, 200, 'and it lets the IPv4 client in');
  t.equal((await s.cli('instance', 'limits', slug, '--ip-allow', 'none', '--json')).code, 0);

  t.equal((await s.cli('instance', 'disable', slug, '--json')).json.is_active, false);
  const disabled = await s.api('GET', '/v1/domains');
  t.equal(disabled.status, 403);
  t.equal(disabled.body.code, 'forbidden');
  for (const [method, path] of [['GET', '/v1/nothing'], ['DELETE', '/v1/senders'], ['GET', '/v1/mails/send']] as const) {
    t.equal((await s.api(method, path)).status, 403, `${method} ${path}: a disabled instance is 403 before any 404 or 405`);
  }
  t.equal((await s.cli('instance', 'enable', slug, '--json')).json.is_active, true);
  t.equal((await s.api('GET', '/v1/domains')).status, 200);
});

t.test('a revoked key stops working on the next request', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const k = await s.cli('apikey', 'create', slug, '--json');
  t.equal((await s.api('GET', '/v1/senders', { key: k.json.api_key })).status, 200);
  await s.cli('apikey', 'revoke', slug, k.json.key_id, '--json');
  t.equal((await s.api('GET', '/v1/senders', { key: k.json.api_key })).status, 401);
});

t.test('tenants never see each other: lists and ids of another instance', async (t) => {
  const s = await startTestService(t);
  const a = await s.tenant();
  const b = await s.tenant();
  const asA = { key: a.key, slug: a.slug };
  const asB = { key: b.key, slug: b.slug };
  const domainsA = (await s.api('GET', '/v1/domains', asA)).body.data;
  const domainsB = (await s.api('GET', '/v1/domains', asB)).body.data;
  t.same(domainsA.map((d: { domain: string }) => d.domain), [`${a.slug}.sandbox.test`]);
  t.same(domainsB.map((d: { domain: string }) => d.domain), [`${b.slug}.sandbox.test`]);
  const foreignDomain = await s.api('GET', `/v1/domains/${domainsA[0].id}`, asB);
  t.equal(foreignDomain.status, 404);
  t.equal(foreignDomain.body.code, 'domain_not_found');
  t.equal((await s.api('GET', `/v1/domains/${a.slug}.sandbox.test/status`, asB)).body.code, 'domain_not_found');
  const senderA = (await s.api('GET', '/v1/senders', asA)).body.data[0];
  const foreignSender = await s.api('GET', `/v1/senders/${senderA.id}`, asB);
  t.equal(foreignSender.status, 404);
  t.equal(foreignSender.body.code, 'sender_not_found');
  t.equal((await s.api('GET', `/v1/senders?email=${a.slug}`, asB)).body.data.length, 0);
});

t.test('apikey create: scoped keys need a scope and a plan that allows them', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const empty = await s.cli('apikey', 'create', slug, '--scopes', ',', '--json');
  t.equal(empty.code, 1);
  t.equal(empty.json.code, 'api_key_scope_required');
  const unknown = await s.cli('apikey', 'create', slug, '--scopes', 'mail:explode', '--json');
  t.equal(unknown.json.code, 'validation_error');
  await s.cli('instance', 'limits', slug, '--scoped-keys', 'unavailable', '--json');
  const plan = await s.cli('apikey', 'create', slug, '--scopes', 'mail:read', '--json');
  t.equal(plan.json.code, 'plan_api_access_control_unavailable');
  const all = await s.cli('apikey', 'create', slug, '--json');
  t.equal(all.code, 0);
  t.equal(all.json.access_type, 'all');
  t.match(all.json.api_key, /^est\.[a-z2-7]{16}\.[a-z2-7]{40}$/);
});
