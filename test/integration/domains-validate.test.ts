import t from 'tap';
import { allVerified, HOSTNAME, sharedWorld, states } from './domains-fixture';
import { runCli } from '../helpers/service';

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const world = sharedWorld(t);
let n = 0;
const fixture = async () => (await world()).domain(`d${++n}.mail.example.com`);

t.test('a domain with every record published validates with all four states verified and timestamps set', async (t) => {
  const f = await fixture();
  t.same(states(f.domain), { mx: 'pending', spf: 'pending', dkim: 'pending', dmarc: 'pending' });
  t.equal(f.domain.last_verification_at, null);
  f.dns.setZone(f.zone());
  const res = await f.validate();
  t.equal(res.status, 200, res.body?.detail);
  t.same(states(res.body), allVerified);
  t.equal(res.body.is_verified, true);
  for (const k of ['mx_verified_at', 'spf_verified_at', 'dkim_verified_at', 'dmarc_verified_at', 'last_verification_at', 'ownership_verified_at']) {
    t.match(res.body[k], iso, `${k} is a timestamp`);
  }
  t.equal(res.body.is_ownership_verified, true);
  const detail = await f.api('GET', `/v1/domains/${f.domain.id}`);
  t.same(states(detail.body), allVerified);
  const status = await f.api('GET', `/v1/domains/${f.domain.domain}/status`);
  t.same(status.body, { id: f.domain.id, domain: f.name, is_verified: true });
});

t.test('the CLI validate gives the same Domain object as the API and repeating it gives the same result', async (t) => {
  const f = await fixture();
  f.dns.setZone(f.zone());
  const api = await f.validate();
  const cli = await f.s.cli('domain', 'validate', f.slug, f.name, '--json');
  t.equal(cli.code, 0, cli.stdout);
  t.same(Object.keys(cli.json).sort(), Object.keys(api.body).sort());
  t.same(states(cli.json), allVerified);
  t.equal(cli.json.is_verified, true);
  t.same(cli.json.dns_records, api.body.dns_records);
  const again = await f.validate();
  t.same(states(again.body), allVerified);
});

t.test('a CLI given only the data dir uses the running server\'s host name and resolvers (CONTRACT §3: same configuration)', async (t) => {
  const f = await fixture();
  f.dns.setZone(f.zone());
  const bare = (...args: string[]) => runCli({ ESTAFETA_DATA_DIR: f.s.dataDir }, args);
  const cli = await bare('domain', 'validate', f.slug, f.name, '--json');
  t.equal(cli.code, 0, cli.stdout);
  t.same(states(cli.json), allVerified, 'validated through the server\'s resolvers, not the system ones');
  t.same(cli.json.dns_records, f.domain.dns_records, `the records of ${HOSTNAME}, not of the OS host name`);
  const dkim = await bare('domain', 'dkim', f.slug, f.name, '--json');
  t.same(dkim.json, f.dkim);
  // A value the CLI is given itself still wins.
  const own = await runCli({ ESTAFETA_DATA_DIR: f.s.dataDir, ESTAFETA_HOSTNAME: 'other.example.test' }, ['domain', 'dkim', f.slug, f.name, '--json']);
  t.ok(own.json.selectors.every((sel: { cname_target: string }) => sel.cname_target.endsWith('.other.example.test')), 'the CLI\'s own setting');
});

t.test('a wrong SPF record fails SPF only; the other three verify', async (t) => {
  const f = await fixture();
  const z = f.zone();
  z[f.name].TXT = ['v=spf1 include:_spf.other-provider.test ~all'];
  f.dns.setZone(z);
  const res = await f.validate();
  t.equal(res.status, 200);
  t.same(states(res.body), { ...allVerified, spf: 'failed' });
  t.equal(res.body.is_verified, false);
  t.match(res.body.spf_verified_at, iso, 'a failed record also gets its validation date');
});

t.test('two SPF records fail SPF even when one of them includes the platform', async (t) => {
  const f = await fixture();
  const z = f.zone();
  z[f.name].TXT = [`v=spf1 include:_spf.${HOSTNAME} ~all`, 'v=spf1 include:_spf.other.test -all'];
  f.dns.setZone(z);
  t.same(states((await f.validate()).body), { ...allVerified, spf: 'failed' });
});

t.test('an SPF record with other mechanisms besides the platform include verifies', async (t) => {
  const f = await fixture();
  const z = f.zone();
  z[f.name].TXT = ['google-site-verification=abc', `v=spf1 ip4:192.0.2.1 +include:_spf.${HOSTNAME} -all`];
  f.dns.setZone(z);
  t.same(states((await f.validate()).body), allVerified);
});

t.test('a second, foreign MX keeps MX from verifying', async (t) => {
  const f = await fixture();
  const z = f.zone();
  z[f.name].MX = [{ exchange: HOSTNAME, priority: 10 }, { exchange: 'mx.other.test', priority: 20 }];
  f.dns.setZone(z);
  t.same(states((await f.validate()).body), { ...allVerified, mx: 'failed' });
});

t.test('a null MX is not the platform MX', async (t) => {
  const f = await fixture();
  const z = f.zone();
  z[f.name].MX = [{ exchange: '.', priority: 0 }];
  f.dns.setZone(z);
  t.same(states((await f.validate()).body), { ...allVerified, mx: 'failed' });
});

t.test('one DKIM selector missing fails DKIM', async (t) => {
  const f = await fixture();
  const z = f.zone();
  delete z[`s2._domainkey.${f.name}`];
  f.dns.setZone(z);
  t.same(states((await f.validate()).body), { ...allVerified, dkim: 'failed' });
});

t.test('a DKIM CNAME pointing elsewhere fails DKIM', async (t) => {
  const f = await fixture();
  const z = f.zone();
  z[`s1._domainkey.${f.name}`].CNAME = 's1.other.dkim.provider.test';
  f.dns.setZone(z);
  t.same(states((await f.validate()).body), { ...allVerified, dkim: 'failed' });
});

t.test('DKIM is judged on the two CNAMEs dns_records lists, not on the operator TXT at their targets', async (t) => {
  const f = await fixture();
  const z = f.zone();
  for (const s of f.dkim.selectors) delete z[s.cname_target];
  f.dns.setZone(z);
  t.same(states((await f.validate()).body), allVerified, 'exactly the records of dns_records verify the domain');
});

t.test('a DMARC record without rua or without a policy fails DMARC', async (t) => {
  const f = await fixture();
  for (const bad of ['v=DMARC1; p=none', 'v=DMARC1; rua=mailto:d@example.com', 'v=DMARC1; p=maybe; rua=mailto:d@example.com', 'p=none; v=DMARC1; rua=mailto:d@example.com']) {
    const z = f.zone();
    z[`_dmarc.${f.name}`].TXT = [bad];
    f.dns.setZone(z);
    t.same(states((await f.validate()).body), { ...allVerified, dmarc: 'failed' }, bad);
  }
  const z = f.zone();
  z[`_dmarc.${f.name}`].TXT = ['v=DMARC1; p=reject; rua=mailto:reports@example.com'];
  f.dns.setZone(z);
  t.same(states((await f.validate()).body), allVerified, 'any valid policy and mailto rua verifies');
  // The record the service asks for names ESTAFETA_HOSTNAME, which may be one label (an OS host name).
  z[`_dmarc.${f.name}`].TXT = ['v=DMARC1; p=none; rua=mailto:dmarc@vm'];
  f.dns.setZone(z);
  t.same(states((await f.validate()).body), allVerified, 'a single-label host in the rua');
});

t.test('NXDOMAIN for every name is a verdict: all four failed', async (t) => {
  const f = await fixture();
  f.dns.setZone({});
  const res = await f.validate();
  t.equal(res.status, 200);
  t.same(states(res.body), { mx: 'failed', spf: 'failed', dkim: 'failed', dmarc: 'failed' });
  t.match(res.body.last_verification_at, iso);
  t.equal(res.body.ownership_verified_at, null);
});

t.test('a verified domain whose record stops resolving degrades to failed on the next validate, and back', async (t) => {
  const f = await fixture();
  f.dns.setZone(f.zone());
  t.same(states((await f.validate()).body), allVerified);
  const z = f.zone();
  delete z[`_dmarc.${f.name}`];
  f.dns.setZone(z);
  const before = await f.api('GET', `/v1/domains/${f.domain.id}`);
  t.same(states(before.body), allVerified, 'nothing changes until validate runs');
  const degraded = await f.validate();
  t.same(states(degraded.body), { ...allVerified, dmarc: 'failed' });
  t.equal(degraded.body.is_verified, false);
  f.dns.setZone(f.zone());
  t.same(states((await f.validate()).body), allVerified, 'a corrected record verifies again');
});
