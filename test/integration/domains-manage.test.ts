import t from 'tap';
import path from 'node:path';
import Database from 'better-sqlite3';
import { allVerified, HOSTNAME, sharedWorld, states } from './domains-fixture';
import { startTestService } from '../helpers/service';

const world = sharedWorld(t);
let n = 0;
const fixture = async () => (await world()).domain(`d${++n}.mail.example.com`);

t.test('dns_records carries the exact five records computed from the domain and the host name', async (t) => {
  const f = await fixture();
  const token = f.domain.ownership_token;
  t.match(token, /^[A-Za-z0-9_-]{8,}$/);
  t.same(f.domain.dns_records, {
    ownership_cname: { type: 'CNAME', host: `${token}.${f.name}`, value: `verify.${HOSTNAME}`, priority: null },
    mx: { type: 'MX', host: f.name, value: HOSTNAME, priority: 10 },
    spf: { type: 'TXT', host: f.name, value: `v=spf1 include:_spf.${HOSTNAME} ~all`, priority: null },
    dkim: [
      { type: 'CNAME', host: `s1._domainkey.${f.name}`, value: `s1.${token}.dkim.${HOSTNAME}`, priority: null },
      { type: 'CNAME', host: `s2._domainkey.${f.name}`, value: `s2.${token}.dkim.${HOSTNAME}`, priority: null },
    ],
    dmarc: { type: 'TXT', host: `_dmarc.${f.name}`, value: `v=DMARC1; p=none; rua=mailto:dmarc@${HOSTNAME}`, priority: null },
  });
  const detail = await f.api('GET', `/v1/domains/${f.domain.id}`);
  t.same(detail.body.dns_records, f.domain.dns_records, 'the API computes the same records');
  t.same(f.dkim.selectors.map((s) => [s.selector, s.active, s.cname_host, s.cname_target]), [
    ['s1', true, `s1._domainkey.${f.name}`, `s1.${token}.dkim.${HOSTNAME}`],
    ['s2', false, `s2._domainkey.${f.name}`, `s2.${token}.dkim.${HOSTNAME}`],
  ]);
  for (const s of f.dkim.selectors) t.match(s.txt, /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]{300,}$/);
});

t.test('domain names are normalized: case, trailing dot and internationalized names', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const upper = await s.cli('domain', 'add', slug, 'News.Example.COM.', '--json');
  t.equal(upper.code, 0, upper.stdout);
  t.equal(upper.json.domain, 'news.example.com');
  t.same(states(upper.json), { mx: 'pending', spf: 'pending', dkim: 'pending', dmarc: 'pending' });
  t.equal(upper.json.is_sandbox, false);
  const idn = await s.cli('domain', 'add', slug, 'correo.bücher.example', '--json');
  t.equal(idn.code, 0, idn.stdout);
  t.equal(idn.json.domain, 'correo.xn--bcher-kva.example');
  const names = async (q: string) => (await s.api('GET', `/v1/domains?domain=${encodeURIComponent(q)}`)).body.data.map((d: any) => d.domain);
  for (const q of ['Bücher', 'correo.bücher.example', 'xn--bcher']) t.same(await names(q), ['correo.xn--bcher-kva.example'], `domain filter ${q}`);
  const status = await s.api('GET', '/v1/domains/NEWS.example.com./status');
  t.same(status.body, { id: upper.json.id, domain: 'news.example.com', is_verified: false }, 'status by name normalizes too');
  const bad = await s.cli('domain', 'add', slug, 'not a domain', '--json');
  t.equal(bad.json.code, 'validation_error');
  // Its records live at longer names (the ownership CNAME adds 21): past 232 they could not be
  // published, and every validation would be a 503 forever.
  const named = (n: number) => `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(n)}.example`; // 200 + n
  t.equal((await s.cli('domain', 'add', slug, named(32), '--json')).code, 0, 'a name of 232 characters');
  const tooLong = await s.cli('domain', 'add', slug, named(33), '--json');
  t.same([tooLong.json.code, tooLong.json.errors?.[0]?.pointer, tooLong.json.errors?.[0]?.code], ['validation_error', '/domain', 'string_too_long'], 'one of 233');
});

t.test('a name under sandbox.test is rejected with 422', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  for (const name of ['other.sandbox.test', 'sandbox.test', 'X.Sandbox.Test.']) {
    const r = await s.cli('domain', 'add', slug, name, '--json');
    t.not(r.code, 0);
    t.equal(r.json.code, 'validation_error', name);
    t.equal(r.json.errors?.[0]?.pointer, '/domain');
  }
});

t.test('adding an existing domain is domain_already_exists; delete then re-add reactivates the same domain', async (t) => {
  const f = await fixture();
  const dup = await f.s.cli('domain', 'add', f.slug, f.name.toUpperCase(), '--json');
  t.equal(dup.json.code, 'domain_already_exists');
  f.dns.setZone(f.zone());
  t.same(states((await f.validate()).body), allVerified);
  const del = await f.s.cli('domain', 'delete', f.slug, f.name, '--json');
  t.equal(del.code, 0);
  t.equal((await f.api('GET', `/v1/domains/${f.domain.id}`)).status, 404, 'a deleted domain is not found');
  t.equal((await f.api('POST', `/v1/domains/${f.domain.id}/validate`)).body.code, 'domain_not_found');
  const list = await f.api('GET', '/v1/domains');
  t.notOk(list.body.data.some((d: any) => d.id === f.domain.id));
  const again = await f.s.cli('domain', 'add', f.slug, f.name, '--json');
  t.equal(again.code, 0, again.stdout);
  t.equal(again.json.id, f.domain.id, 'the same domain comes back');
  t.equal(again.json.ownership_token, f.domain.ownership_token);
  t.same(states(again.json), { mx: 'pending', spf: 'pending', dkim: 'pending', dmarc: 'pending' });
  t.same(states((await f.validate()).body), allVerified, 'its DKIM keys and records are unchanged');
});

t.test('domain revoke sets the four states to revoked and validate does not undo it', async (t) => {
  const f = await fixture();
  f.dns.setZone(f.zone());
  const verified = (await f.validate()).body;
  const r = await f.s.cli('domain', 'revoke', f.slug, f.name, '--json');
  t.equal(r.code, 0, r.stdout);
  t.same(states(r.json), { mx: 'revoked', spf: 'revoked', dkim: 'revoked', dmarc: 'revoked' });
  t.equal(r.json.is_verified, false);
  t.equal(r.json.mx_verified_at, verified.mx_verified_at, 'timestamps untouched');
  await new Promise((resolve) => setTimeout(resolve, 1100)); // a later second than the first validation
  const v = await f.validate();
  t.equal(v.status, 200);
  t.same(states(v.body), { mx: 'revoked', spf: 'revoked', dkim: 'revoked', dmarc: 'revoked' }, 'revocation is administrative');
  for (const k of ['mx', 'spf', 'dkim', 'dmarc']) {
    t.equal(v.body[`${k}_verified_at`], v.body.last_verification_at, `${k}_verified_at: the date of this validation, which queried the record`);
    t.not(v.body[`${k}_verified_at`], verified[`${k}_verified_at`]);
  }
  const sandbox = await f.s.cli('domain', 'revoke', f.slug, `${f.slug}.sandbox.test`, '--json');
  t.equal(sandbox.json.code, 'domain_is_sandbox');
  const rotate = await f.s.cli('domain', 'dkim', 'rotate', f.slug, `${f.slug}.sandbox.test`, '--json');
  t.equal(rotate.json.code, 'domain_is_sandbox', 'the sandbox domain cannot be modified: no key rotation either');
  t.equal((await f.s.cli('domain', 'dkim', f.slug, `${f.slug}.sandbox.test`, '--json')).json.active_selector, 's1', 'its keys are unchanged');
});

t.test('dkim rotate: s2 signs, s1 gets a fresh key, and the customer\'s CNAMEs keep the domain verified', async (t) => {
  const f = await fixture();
  f.dns.setZone(f.zone());
  t.same(states((await f.validate()).body), allVerified);
  const rot = await f.s.cli('domain', 'dkim', 'rotate', f.slug, f.name, '--json');
  t.equal(rot.code, 0, rot.stdout);
  t.equal(rot.json.active_selector, 's2', 'the standby becomes active');
  const [s1old, s2old] = f.dkim.selectors;
  const [s1new, s2new] = rot.json.selectors;
  t.not(s1new.txt, s1old.txt, 's1 has a fresh key');
  t.equal(s2new.txt, s2old.txt, 's2 keeps its key');
  t.same([s1new.active, s2new.active], [false, true]);
  t.same(states((await f.validate()).body), allVerified, 'the stale s1 TXT at the operator\'s target is not the customer\'s record');
  const printed = await f.s.cli('domain', 'dkim', f.slug, f.name, '--json');
  t.same(printed.json.selectors, rot.json.selectors, 'domain dkim prints the current keys');
});

t.test('DKIM private keys never appear in any API response', async (t) => {
  const f = await fixture();
  f.dns.setZone(f.zone());
  const db = new Database(path.join(f.s.dataDir, 'estafeta.db'), { readonly: true, fileMustExist: false });
  t.teardown(() => db.close());
  const keys = db.prepare('SELECT private_key FROM dkim_keys').all() as { private_key: string }[];
  t.ok(keys.length >= 4, 'keys exist for the sandbox and the client domain');
  const responses = [
    await f.api('GET', '/v1/domains'),
    await f.api('GET', `/v1/domains/${f.domain.id}`),
    await f.validate(),
    await f.api('GET', `/v1/domains/${f.domain.domain}/status`),
    await f.api('GET', '/openapi.json', { key: null, slug: null }),
  ];
  const texts = [...responses.map((r) => JSON.stringify(r.body)), (await f.s.cli('domain', 'dkim', f.slug, f.name, '--json')).stdout];
  for (const text of texts) {
    t.notMatch(text, /PRIVATE KEY/);
    for (const k of keys) {
      const body = k.private_key.split('\n').filter((l) => l && !l.startsWith('-----'))[1];
      t.notOk(text.includes(body), 'no line of a private key');
    }
  }
});
