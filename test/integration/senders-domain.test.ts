import t from 'tap';
import { sharedWorld, states } from './domains-fixture';
import { startTestService } from '../helpers/service';

const world = sharedWorld(t);
let n = 0;
const fixture = async (ownTenant = false) => (await world()).domain(`d${++n}.mail.example.com`, { ownTenant });

t.test('sender add requires a verified domain, then a unique address', async (t) => {
  const f = await fixture();
  const early = await f.s.cli('sender', 'add', f.slug, `news@${f.name}`, '--json');
  t.not(early.code, 0);
  t.equal(early.json.code, 'domain_not_verified');
  const unknown = await f.s.cli('sender', 'add', f.slug, 'news@unregistered.example.org', '--json');
  t.equal(unknown.json.code, 'domain_not_verified', 'an unregistered domain is not verified either (CONTRACT §3)');
  const bad = await f.s.cli('sender', 'add', f.slug, 'not-an-address', '--json');
  t.equal(bad.json.code, 'validation_error');

  f.dns.setZone(f.zone());
  t.equal((await f.validate()).body.is_verified, true);
  const ok = await f.s.cli('sender', 'add', f.slug, `News@${f.name.toUpperCase()}`, '--name', 'Newsletter', '--json');
  t.equal(ok.code, 0, ok.stdout);
  t.equal(ok.json.email_address, `News@${f.name}`, 'the domain part is normalized');
  t.equal(ok.json.name, 'Newsletter');
  t.equal(ok.json.domain_id, f.domain.id);
  t.equal(ok.json.domain_is_verified, true);
  t.equal(ok.json.is_consent_required, false);
  const dup = await f.s.cli('sender', 'add', f.slug, `News@${f.name}.`, '--json');
  t.equal(dup.json.code, 'sender_already_exists');
  const dupCase = await f.s.cli('sender', 'add', f.slug, `news@${f.name}`, '--json');
  t.equal(dupCase.json.code, 'sender_already_exists', 'addresses differing only in case are one sender');
  const consent = await f.s.cli('sender', 'consent', f.slug, `NEWS@${f.name}`, '--none', '--json');
  t.equal(consent.json.email_address, `News@${f.name}`, 'found whatever the case, shown as registered');
});

t.test('a revoked domain cannot get new senders', async (t) => {
  const f = await fixture();
  f.dns.setZone(f.zone());
  await f.validate();
  await f.s.cli('domain', 'revoke', f.slug, f.name, '--json');
  const r = await f.s.cli('sender', 'add', f.slug, `a@${f.name}`, '--json');
  t.equal(r.json.code, 'domain_not_verified');
});

t.test('a verified domain whose record changes degrades, and its senders show domain_is_verified false on the next read', async (t) => {
  const f = await fixture(true);
  f.dns.setZone(f.zone());
  await f.validate();
  const added = await f.s.cli('sender', 'add', f.slug, `billing@${f.name}`, '--json');
  const id = added.json.id;
  t.equal((await f.api('GET', `/v1/senders/${id}`)).body.domain_is_verified, true);

  const z = f.zone();
  z[f.name].MX = [{ exchange: 'mx.elsewhere.test', priority: 10 }];
  f.dns.setZone(z);
  t.equal((await f.api('GET', `/v1/senders/${id}`)).body.domain_is_verified, true, 'no change before validate');
  const degraded = await f.validate();
  t.same(states(degraded.body), { mx: 'failed', spf: 'verified', dkim: 'verified', dmarc: 'verified' });

  t.equal((await f.api('GET', `/v1/senders/${id}`)).body.domain_is_verified, false, 'detail');
  const list = await f.api('GET', '/v1/senders');
  t.equal(list.body.data.find((s: any) => s.id === id).domain_is_verified, false, 'list');
  const verifiedOnly = await f.api('GET', '/v1/senders?is_domain_verified=true');
  t.same(verifiedOnly.body.data.map((s: any) => s.email_address), [`sandbox@${f.slug}.sandbox.test`]);
  const unverifiedOnly = await f.api('GET', '/v1/senders?is_domain_verified=false');
  t.same(unverifiedOnly.body.data.map((s: any) => s.id), [id]);
  const all = await f.api('GET', '/v1/senders');
  t.equal(all.body.pagination.total_items, 2, 'omitted: no filter');
  const badFilter = await f.api('GET', '/v1/senders?is_domain_verified=maybe');
  t.equal(badFilter.status, 400);

  f.dns.setZone(f.zone());
  await f.validate();
  t.equal((await f.api('GET', `/v1/senders/${id}`)).body.domain_is_verified, true, 'and back after a corrected validate');
});

t.test('sender detail of an unknown id is 404 sender_not_found; a malformed id is 422', async (t) => {
  const f = await fixture();
  const r = await f.api('GET', '/v1/senders/424242');
  t.equal(r.status, 404);
  t.equal(r.body.code, 'sender_not_found');
  const other = await f.s.tenant();
  const mine = await f.api('GET', '/v1/senders', { key: f.key, slug: f.slug });
  const cross = await f.api('GET', `/v1/senders/${mine.body.data[0].id}`, { key: other.key, slug: other.slug });
  t.equal(cross.status, 404, "another instance's sender is not found");
  t.equal((await f.api('GET', '/v1/senders/x1', { key: f.key, slug: f.slug })).status, 422);
});

t.test('senders of a deleted domain disappear from reads', async (t) => {
  const f = await fixture();
  f.dns.setZone(f.zone());
  await f.validate();
  const added = await f.s.cli('sender', 'add', f.slug, `gone@${f.name}`, '--json');
  await f.s.cli('domain', 'delete', f.slug, f.name, '--json');
  t.equal((await f.api('GET', `/v1/senders/${added.json.id}`)).body.code, 'sender_not_found');
});

t.test('re-adding a deleted domain brings its senders back only within the sender quota', async (t) => {
  const f = await fixture(true);
  f.dns.setZone(f.zone());
  await f.validate();
  for (const box of ['a', 'b']) t.equal((await f.s.cli('sender', 'add', f.slug, `${box}@${f.name}`, '--json')).code, 0);
  await f.s.cli('domain', 'delete', f.slug, f.name, '--json');
  t.equal((await f.s.cli('instance', 'limits', f.slug, '--max-senders', '1', '--json')).code, 0);
  const back = await f.s.cli('domain', 'add', f.slug, f.name, '--json');
  t.equal(back.json.code, 'plan_senders_limit_exceeded', 'its two senders would pass a quota of one');
  t.match(back.json, { limit: 1, usage: 0, remaining: 1 });
  t.same((await f.api('GET', '/v1/senders')).body.data.map((x: any) => x.email_address), [`sandbox@${f.slug}.sandbox.test`], 'nothing came back');
  t.equal((await f.s.cli('instance', 'limits', f.slug, '--max-senders', '2', '--json')).code, 0);
  t.equal((await f.s.cli('domain', 'add', f.slug, f.name, '--json')).code, 0, 'within the quota it comes back');
  t.equal((await f.api('GET', '/v1/senders')).body.data.length, 3, 'with its senders');
});

// Spec, 402 plan_senders_limit_exceeded: the quota of active senders has no sandbox exception,
// only the sender instance create provisions comes with the account (README, Decisions).
t.test('senders added on the sandbox domain count against the sender quota; the provisioned one does not', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  t.equal((await s.cli('instance', 'limits', slug, '--max-senders', '1', '--json')).code, 0);
  t.equal((await s.cli('sender', 'add', slug, `news@${slug}.sandbox.test`, '--json')).code, 0, 'a quota of one leaves one to add');
  const over = await s.cli('sender', 'add', slug, `team@${slug}.sandbox.test`, '--json');
  t.not(over.code, 0);
  t.match(over.json, { code: 'plan_senders_limit_exceeded', limit: 1, usage: 1, remaining: 0 });
});

t.test('search/names and search/emails find senders by partial, case-insensitive q', async (t) => {
  const f = await fixture(true);
  f.dns.setZone(f.zone());
  await f.validate();
  await f.s.cli('sender', 'add', f.slug, `ventas@${f.name}`, '--name', 'Equipo de Ventas', '--json');
  await f.s.cli('sender', 'add', f.slug, `soporte@${f.name}`, '--name', 'Soporte 100%_real', '--json');
  const names = await f.api('GET', '/v1/senders/search/names?q=VENTAS');
  t.equal(names.status, 200);
  t.same(names.body.data.map((s: any) => s.email_address), [`ventas@${f.name}`]);
  const literal = await f.api('GET', `/v1/senders/search/names?q=${encodeURIComponent('100%_')}`);
  t.same(literal.body.data.map((s: any) => s.email_address), [`soporte@${f.name}`], '% and _ are literal');
  const emails = await f.api('GET', '/v1/senders/search/emails?q=MAIL.EXAMPLE');
  t.same(emails.body.data.map((s: any) => s.email_address).sort(), [`soporte@${f.name}`, `ventas@${f.name}`]);
  const byName = await f.api('GET', '/v1/senders/search/emails?q=Equipo');
  t.same(byName.body.data, [], 'search/emails does not search names');
  const none = await f.api('GET', '/v1/senders/search/names');
  t.equal(none.body.pagination.total_items, 3, 'without q every sender is listed');
  const filtered = await f.api('GET', '/v1/senders?name=soporte&email=example');
  t.same(filtered.body.data.map((s: any) => s.name), ['Soporte 100%_real']);
});
