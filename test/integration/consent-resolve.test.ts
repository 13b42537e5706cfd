// GET /v1/consent-rules/resolve (spec; precedence: CONTRACT §6) through the real service.
import t from 'tap';
import { startTestService, type TapLike, type TestService } from '../helpers/service';

interface Rule { channel?: string; contact_type: string; contact: string; purpose: string; action: 'allow' | 'deny' }

async function setup(t: TapLike) {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const purposes: Record<string, number> = Object.fromEntries((await s.api('GET', '/v1/consent-purposes')).body.data.map((p: { code: string; id: number }) => [p.code, p.id]));
  const term = await s.cli('term', 'add', slug, '--name', 'All', '--type', 'marketing', '--purposes', 'marketing,newsletter', '--channels', 'mail,sms,push', '--json');
  await s.cli('term', 'version', 'add', slug, String(term.json.id), '--version', 'v1', '--body', 'Text', '--current', '--json');
  const register = async (...rules: Rule[]) => {
    const res = await s.api('POST', '/v1/consent-events', { body: { term_id: term.json.id, method: 'single_opt_in',
      rules: rules.map(({ purpose, ...r }) => ({ ...r, purpose_id: purposes[purpose] })) } });
    if (res.status !== 201) throw new Error(res.text);
    return res.body;
  };
  return { s, slug, purposes, register };
}

const resolve = (s: TestService, query: string) => s.api('GET', `/v1/consent-rules/resolve?${query}`);
type Decision = { channel: string; purpose_code: string; state: string; rule: { id: number; event_id: number } | null; send_verdict: unknown };
const find = (ds: Decision[], channel: string, purpose: string): Decision | undefined => ds.find((d) => d.channel === channel && d.purpose_code === purpose);

t.test('one pair: every purpose on the channels its type fits, the deciding rule and the send verdict', async (t) => {
  const { s, register } = await setup(t);
  const ev = await register({ contact_type: 'email_address', contact: 'Ana@Example.com', purpose: 'marketing', action: 'allow' });
  const res = await resolve(s, 'contacts=ANA%40example.com&contact_types=email_address');
  t.equal(res.status, 200);
  t.match(res.body.resolved_at, /Z$/);
  t.equal(res.body.results.length, 1);
  const r = res.body.results[0];
  t.same([r.contact, r.contact_type], ['ana@example.com', 'email_address'], 'the email is compared in canonical form');
  t.same(r.decisions.map((d: Decision) => [d.channel, d.purpose_code, d.state]), [['mail', 'marketing', 'granted'], ['mail', 'newsletter', 'no_record']]);
  t.match(r.decisions[0].rule, { id: ev.rules[0].id, event_id: ev.id, action: 'allow', contact: 'ana@example.com' });
  t.same(r.decisions[0].send_verdict, { opt_in: 'sent', opt_out: 'sent' });
  t.equal(r.decisions[1].rule, null);
  t.same(r.decisions[1].send_verdict, { opt_in: 'not_sent', opt_out: 'sent' });

  const only = await resolve(s, 'contacts=ana%40example.com&contact_types=email_address&purpose=newsletter');
  t.same(only.body.results[0].decisions.map((d: Decision) => d.purpose_code), ['newsletter']);
  const byId = await resolve(s, `contacts=ana%40example.com&contact_types=email_address&purpose_id=${r.decisions[0].purpose_id}`);
  t.same(byId.body.results[0].decisions.map((d: Decision) => d.purpose_code), ['marketing']);
  t.equal((await resolve(s, 'contacts=a%40b.cl&contact_types=email_address&purpose=nope')).body.code, 'consent_purpose_not_found');
  t.equal((await resolve(s, 'contacts=a%40b.cl&contact_types=email_address&purpose_id=999999')).status, 404);
  const id = r.decisions[0].purpose_id;
  const both = await resolve(s, `contacts=ana%40example.com&contact_types=email_address&purpose_id=${id}&purpose=marketing`);
  t.same(both.body.results[0].decisions.map((d: Decision) => d.purpose_code), ['marketing'], 'both naming one purpose');
  const contradicting = await resolve(s, `contacts=ana%40example.com&contact_types=email_address&purpose_id=${id}&purpose=newsletter`);
  t.same([contradicting.status, contradicting.body.code], [400, 'malformed_request'], 'naming two purposes is refused, not answered empty');
  t.match(contradicting.body.detail, /newsletter.*different purposes/);
});

t.test('the newest rule sets the state: a revocation after a grant revokes, a grant after a revocation grants', async (t) => {
  const { s, register } = await setup(t);
  // Each rule a later millisecond than the one before: at the same one a deny wins (by design).
  const later = (): Promise<void> => new Promise((r) => setTimeout(r, 5));
  await register({ contact_type: 'email_address', contact: 'x@example.com', purpose: 'marketing', action: 'allow' });
  await later();
  const deny = await register({ contact_type: 'email_address', contact: 'x@example.com', purpose: 'marketing', action: 'deny' });
  await register({ contact_type: 'email_address', contact: 'y@example.com', purpose: 'marketing', action: 'deny' });
  await later();
  const regrant = await register({ contact_type: 'email_address', contact: 'y@example.com', purpose: 'marketing', action: 'allow' });
  const res = await resolve(s, 'contacts=x%40example.com,y%40example.com&contact_types=email_address,email_address&purpose=marketing');
  const [x, y] = res.body.results.map((r: { decisions: Decision[] }) => r.decisions[0]);
  t.same([x.state, x.rule.event_id], ['revoked', deny.id]);
  t.same(x.send_verdict, { opt_in: 'not_sent', opt_out: 'not_sent' });
  t.same([y.state, y.rule.event_id], ['granted', regrant.id]);
  t.same(y.send_verdict, { opt_in: 'sent', opt_out: 'sent' });
});

t.test('several pairs resolved together: each pair alone, and combined where a revocation wins', async (t) => {
  const { s, register } = await setup(t);
  // The same person: granted by email, revoked by uniquecode (and the grant is newer).
  await register({ channel: 'mail', contact_type: 'uniquecode', contact: 'Cust-7', purpose: 'marketing', action: 'deny' },
    { channel: 'push', contact_type: 'uniquecode', contact: 'Cust-7', purpose: 'newsletter', action: 'allow' });
  await register({ contact_type: 'email_address', contact: 'p@example.com', purpose: 'marketing', action: 'allow' },
    { channel: 'sms', contact_type: 'phone_number', contact: '+56911112222', purpose: 'marketing', action: 'allow' });

  // Repeated parameters; the uniquecode is matched as sent (case-sensitive).
  const res = await resolve(s, 'contacts=p%40example.com&contacts=Cust-7&contacts=%2B56911112222&contact_types=email_address&contact_types=uniquecode&contact_types=phone_number');
  t.equal(res.status, 200);
  const [email, code, phone] = res.body.results;
  t.same([email.contact, code.contact, phone.contact], ['p@example.com', 'Cust-7', '+56911112222'], 'in the order given');
  t.equal(find(email.decisions, 'mail', 'marketing')?.state, 'granted');
  t.same(find(email.decisions, 'mail', 'marketing')?.send_verdict, { opt_in: 'sent', opt_out: 'sent' }, 'a send evaluates the email alone');
  t.equal(find(code.decisions, 'mail', 'marketing')?.state, 'revoked', 'the uniquecode revocation is kept and returned');
  t.equal(find(code.decisions, 'mail', 'marketing')?.send_verdict, null, 'no send verdict for a uniquecode');
  t.equal(find(code.decisions, 'push', 'newsletter')?.state, 'granted');
  t.same(code.decisions.map((d: Decision) => d.channel).filter((c: string, i: number, a: string[]) => a.indexOf(c) === i), ['mail', 'sms', 'wsp', 'call', 'push']);
  t.same(phone.decisions.map((d: Decision) => d.channel).filter((c: string, i: number, a: string[]) => a.indexOf(c) === i), ['sms', 'wsp', 'call']);
  t.equal(find(phone.decisions, 'sms', 'marketing')?.state, 'granted');

  const combined = res.body.combined as Decision[];
  t.equal(find(combined, 'mail', 'marketing')?.state, 'revoked', 'contradicting identifiers resolved together: deny wins');
  t.equal(find(combined, 'mail', 'marketing')?.send_verdict, null);
  t.equal(find(combined, 'sms', 'marketing')?.state, 'granted');
  t.equal(find(combined, 'mail', 'newsletter')?.state, 'no_record');

  const mailOnly = await resolve(s, 'contacts=p%40example.com,Cust-7,%2B56911112222&contact_types=email_address,uniquecode,phone_number&channel=mail');
  t.same(mailOnly.body.results.map((r: { decisions: Decision[] }) => r.decisions.length), [2, 2, 0], 'channel filter; a phone has no mail channel');
  t.same(mailOnly.body.combined.map((d: Decision) => [d.channel, d.purpose_code, d.state]), [['mail', 'marketing', 'revoked'], ['mail', 'newsletter', 'no_record']]);
  t.equal((await resolve(s, 'contacts=cust-7&contact_types=uniquecode&channel=mail&purpose=marketing')).body.results[0].decisions[0].state, 'no_record', 'uniquecodes are case-sensitive');
});

t.test('lists of different length are 409 consent_contact_pairs_mismatch in both forms; missing lists are 422', async (t) => {
  const { s } = await setup(t);
  for (const query of ['contacts=a%40b.cl,c%40d.cl&contact_types=email_address', 'contacts=a%40b.cl&contact_types=email_address&contact_types=uniquecode']) {
    const res = await resolve(s, query);
    t.equal(res.status, 409, query);
    t.equal(res.body.code, 'consent_contact_pairs_mismatch', query);
  }
  t.same((await resolve(s, 'contacts=a%40b.cl')).body.errors?.[0], { pointer: '/contact_types', code: 'missing', message: 'Field required' }, 'contact_types missing: 422');
  t.equal((await resolve(s, 'contact_types=email_address')).body.code, 'validation_error', 'contacts missing');
  t.equal((await resolve(s, 'contacts=a%40b.cl&contact_types=fax_number')).status, 422, 'unknown type');
  t.equal((await resolve(s, 'contacts=a%40b.cl&contact_types=email_address&channel=fax')).status, 422, 'unknown channel');
  const scoped = await s.cli('apikey', 'create', (await s.tenant()).slug, '--scopes', 'consent:write', '--json');
  t.equal((await s.api('GET', '/v1/consent-rules/resolve?contacts=a%40b.cl&contact_types=email_address', { key: scoped.json.api_key })).status, 403, 'consent:read is required');
});

t.test('/openapi.json documents the resolve parameters and the consent endpoints', async (t) => {
  const s = await startTestService(t);
  const doc = (await s.api('GET', '/openapi.json', { key: null, slug: null })).body;
  const op = doc.paths['/v1/consent-rules/resolve'].get;
  t.same(op.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name).sort(), ['channel', 'contact_types', 'contacts', 'purpose', 'purpose_id']);
  t.same(op.parameters.filter((p: { in: string; required: boolean }) => p.in === 'query' && p.required).map((p: { name: string }) => p.name).sort(), ['contact_types', 'contacts'],
    'the parameters the service answers 400 without are required in the served contract');
  t.equal(op['x-scope'], 'consent:read');
  t.ok(op.responses['409'].description.includes('consent_contact_pairs_mismatch'));
  const post = doc.paths['/v1/consent-events'].post;
  t.equal(post.requestBody.content['application/json'].schema.$ref, '#/components/schemas/ConsentEventRequest');
  t.ok(post.responses['201'].headers.Location);
  t.ok(doc.paths['/v1/consent-events/{id}'].get);
  t.same(doc.paths['/v1/consent-purposes'].get.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name).sort(), ['is_enabled', 'page', 'page_size']);
  t.same(doc.paths['/v1/consent-events'].get.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name).sort(), ['contact', 'page', 'page_size', 'status', 'term_id']);
});
