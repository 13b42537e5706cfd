// The consent catalog: purposes and terms made with the real CLI (CONTRACT §3), read through
// GET /v1/consent-purposes and GET /v1/consent-terms (spec).
import t from 'tap';
import { startTestService } from '../helpers/service';

t.test('purposes: seeded, added, disabled from the CLI; listed with is_enabled as 0/1 and filtered', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const seeded = await s.api('GET', '/v1/consent-purposes');
  t.equal(seeded.status, 200);
  t.same(seeded.body.data.map((p: { code: string; is_enabled: number }) => [p.code, p.is_enabled]), [['marketing', 1], ['newsletter', 1]]);

  const added = await s.cli('purpose', 'add', slug, 'surveys', '--name', 'Surveys', '--description', 'Satisfaction surveys', '--json');
  t.equal(added.code, 0);
  t.match(added.json, { code: 'surveys', name: 'Surveys', description: 'Satisfaction surveys', is_enabled: 1 });
  t.type(added.json.id, 'number');
  const again = await s.cli('purpose', 'add', slug, 'surveys', '--name', 'Again', '--json');
  t.not(again.code, 0);
  t.equal(again.json.code, 'purpose_already_exists');
  t.equal((await s.cli('purpose', 'add', slug, 'bad:code', '--name', 'X', '--json')).json.code, 'validation_error', 'a code cannot hold the CODE:MODE colon');

  const disabled = await s.cli('purpose', 'disable', slug, 'newsletter', '--json');
  t.equal(disabled.code, 0);
  t.equal(disabled.json.is_enabled, 0);
  t.equal((await s.cli('purpose', 'disable', slug, 'nope', '--json')).json.code, 'consent_purpose_not_found');

  const codes = async (query: string) => (await s.api('GET', `/v1/consent-purposes${query}`)).body.data.map((p: { code: string }) => p.code);
  t.same(await codes(''), ['marketing', 'newsletter', 'surveys'], 'without the filter all are returned');
  t.same(await codes('?is_enabled=true'), ['marketing', 'surveys']);
  t.same(await codes('?is_enabled=1'), ['marketing', 'surveys']);
  t.same(await codes('?is_enabled=false'), ['newsletter']);
  t.same(await codes('?is_enabled=0'), ['newsletter']);
  t.same(await codes('?page=2&page_size=2'), ['surveys']);
  const list = await s.api('GET', '/v1/consent-purposes?is_enabled=false');
  t.same(list.body.data[0], { id: disabled.json.id, code: 'newsletter', name: list.body.data[0].name, description: list.body.data[0].description, is_enabled: 0 });
  t.type(list.body.data[0].is_enabled, 'number', 'an integer, not a boolean');
  t.equal((await s.api('GET', '/v1/consent-purposes?is_enabled=maybe')).status, 400);

  const enabled = await s.cli('purpose', 'enable', slug, 'newsletter', '--json');
  t.equal(enabled.json.is_enabled, 1);
});

t.test('terms: created with purposes and channels, versions published and made current, listed with versions', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const purposes = (await s.api('GET', '/v1/consent-purposes')).body.data;
  const id = (code: string) => purposes.find((p: { code: string }) => p.code === code).id;

  const term = await s.cli('term', 'add', slug, '--name', 'Newsletter', '--type', 'subscription', '--purposes', 'newsletter,marketing', '--channels', 'mail,push', '--json');
  t.equal(term.code, 0, term.stdout);
  t.match(term.json, { name: 'Newsletter', type: 'subscription', channels: ['mail', 'push'], is_active: true, versions: [] });
  t.same(term.json.purpose_ids, [id('marketing'), id('newsletter')].sort((a, b) => a - b));

  const v1 = await s.cli('term', 'version', 'add', slug, String(term.json.id), '--version', '1.0', '--body', 'First text', '--document-url', 'https://example.com/t1.pdf', '--current', '--json');
  t.equal(v1.code, 0, v1.stdout);
  t.match(v1.json.versions, [{ version: '1.0', body: 'First text', document_url: 'https://example.com/t1.pdf', is_current: true }]);
  t.match(v1.json.versions[0].published_at, /Z$/);
  const v2 = await s.cli('term', 'version', 'add', slug, String(term.json.id), '--version', '2.0', '--body', 'Second text', '--json');
  t.same(v2.json.versions.map((v: { version: string; is_current: boolean; document_url: string | null }) => [v.version, v.is_current, v.document_url]),
    [['1.0', true, 'https://example.com/t1.pdf'], ['2.0', false, null]], 'publishing does not make current');
  const again = await s.cli('term', 'version', 'add', slug, String(term.json.id), '--version', '2.0', '--body', 'Another text', '--json');
  t.same([again.json.code, again.json.errors?.[0]?.pointer], ['validation_error', '/version'], 'a label names one text');
  const v3 = await s.cli('term', 'version', 'add', slug, String(term.json.id), '--version', '3.0', '--body', 'Third text', '--current', '--json');
  t.same(v3.json.versions.map((v: { is_current: boolean }) => v.is_current), [false, false, true], '--current makes it the only current one');

  const inactive = await s.cli('term', 'add', slug, '--name', 'Old', '--type', 'other', '--purposes', 'marketing', '--channels', 'sms', '--inactive', '--json');
  t.equal(inactive.json.is_active, false);

  const list = await s.api('GET', '/v1/consent-terms');
  t.equal(list.status, 200);
  t.same(list.body.data.map((x: { id: number }) => x.id), [term.json.id, inactive.json.id]);
  t.same(list.body.data[0], v3.json, 'the API serves what the CLI printed');
  t.same(list.body.data[1].versions, []);
  t.same(list.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: 2, total_pages: 1 });
  const page = await s.api('GET', '/v1/consent-terms?page_size=1');
  t.equal(page.body.pagination.has_more, true);
  t.equal(page.body.pagination.total_pages, 2);

  const fail = async (args: string[], code: string, what: string) => {
    const r = await s.cli(...args, '--json');
    t.not(r.code, 0, what);
    t.equal(r.json?.code, code, what);
  };
  await fail(['term', 'add', slug, '--name', 'X', '--type', 'marketing', '--purposes', 'nope', '--channels', 'mail'], 'consent_purpose_not_found', 'unknown purpose code');
  await fail(['term', 'add', slug, '--name', 'X', '--type', 'legalese', '--purposes', 'marketing', '--channels', 'mail'], 'validation_error', 'unknown type');
  await fail(['term', 'add', slug, '--name', 'X', '--type', 'marketing', '--purposes', 'marketing', '--channels', 'fax'], 'validation_error', 'unknown channel');
  await fail(['term', 'add', slug, '--name', 'X', '--type', 'marketing', '--purposes', '', '--channels', 'mail'], 'consent_term_missing_channels_or_purposes', 'no purpose (the spec\'s dashboard code)');
  await fail(['term', 'add', slug, '--name', 'X', '--type', 'marketing', '--purposes', 'marketing', '--channels', ''], 'consent_term_missing_channels_or_purposes', 'no channel');
  await fail(['term', 'version', 'add', slug, '999999', '--version', '1', '--body', 'B'], 'consent_term_not_found', 'unknown term');
  await fail(['term', 'version', 'add', slug, 'abc', '--version', '1', '--body', 'B'], 'validation_error', 'term id not an integer');
  t.equal((await s.api('GET', '/v1/consent-terms')).body.pagination.total_items, 2, 'refused commands stored nothing');

  const scoped = await s.cli('apikey', 'create', slug, '--scopes', 'senders:read', '--json');
  t.equal((await s.api('GET', '/v1/consent-terms', { key: scoped.json.api_key })).status, 403, 'consent:read is required');
  t.equal((await s.api('GET', '/v1/consent-purposes', { key: scoped.json.api_key })).status, 403);
});

t.test('beyond the contract: purpose update, term update (withdraw, re-cover) and term version current', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const renamed = await s.cli('purpose', 'update', slug, 'newsletter', '--name', 'Weekly letter', '--description', 'Sent on Mondays', '--json');
  t.equal(renamed.code, 0, renamed.stdout);
  t.match(renamed.json, { code: 'newsletter', name: 'Weekly letter', description: 'Sent on Mondays', is_enabled: 1 }, 'a seeded purpose is editable; its code stays');
  const cleared = await s.cli('purpose', 'update', slug, 'newsletter', '--description', '', '--json');
  t.match(cleared.json, { name: 'Weekly letter', description: null }, '"" clears the description, the name stays');
  const listed = (await s.api('GET', '/v1/consent-purposes')).body.data.find((p: { code: string }) => p.code === 'newsletter');
  t.same(listed, cleared.json, 'the API serves the change at once');
  t.equal((await s.cli('purpose', 'update', slug, 'newsletter', '--name', ' ', '--json')).json.code, 'validation_error');
  t.equal((await s.cli('purpose', 'update', slug, 'nope', '--name', 'X', '--json')).json.code, 'consent_purpose_not_found');

  const term = (await s.cli('term', 'add', slug, '--name', 'Letter', '--type', 'subscription', '--purposes', 'newsletter', '--channels', 'mail', '--json')).json;
  await s.cli('term', 'version', 'add', slug, String(term.id), '--version', 'v1', '--body', 'One', '--current', '--json');
  const v2 = await s.cli('term', 'version', 'add', slug, String(term.id), '--version', 'v2', '--body', 'Two', '--json');
  t.same(v2.json.versions.map((v: { is_current: boolean }) => v.is_current), [true, false]);
  const current = await s.cli('term', 'version', 'current', slug, String(term.id), 'v2', '--json');
  t.equal(current.code, 0, current.stdout);
  t.same(current.json.versions.map((v: { version: string; is_current: boolean }) => [v.version, v.is_current]), [['v1', false], ['v2', true]], 'v2 is now the only current one');
  const currentV2 = current.json.versions[1].id as number;
  await s.cli('term', 'version', 'add', slug, String(term.id), '--version', 'v3', '--body', 'Three', '--current', '--json');
  const back1 = await s.cli('term', 'version', 'current', slug, String(term.id), 'v1', '--json');
  t.equal(back1.code, 0, `back to an older version: ${back1.stdout}`);
  t.same(back1.json.versions.map((v: { is_current: boolean }) => v.is_current), [true, false, false]);
  const again2 = await s.cli('term', 'version', 'current', slug, String(term.id), 'v2', '--json');
  t.same(again2.json.versions.map((v: { is_current: boolean }) => v.is_current), [false, true, false], 'and forward again');
  const missing = await s.cli('term', 'version', 'current', slug, String(term.id), 'v9', '--json');
  t.same([missing.json.code, missing.json.errors?.[0]?.pointer], ['validation_error', '/version']);

  const rule = { channel: 'mail', contact_type: 'email_address', contact: 'ana@example.test', purpose_id: renamed.json.id, action: 'allow' };
  const given = await s.api('POST', '/v1/consent-events', { body: { term_id: term.id, method: 'single_opt_in', rules: [rule] } });
  t.equal(given.status, 201, given.text);
  t.equal(given.body.term_version_id, currentV2, 'a new consent records the version made current');

  const withdrawn = await s.cli('term', 'update', slug, String(term.id), '--inactive', '--name', 'Letter (old)', '--json');
  t.equal(withdrawn.code, 0, withdrawn.stdout);
  t.match(withdrawn.json, { name: 'Letter (old)', type: 'subscription', channels: ['mail'], is_active: false, purpose_ids: [renamed.json.id] }, 'unnamed fields stay');
  const refused = await s.api('POST', '/v1/consent-events', { body: { term_id: term.id, method: 'single_opt_in', rules: [rule] } });
  t.same([refused.status, refused.body.code], [409, 'consent_term_inactive'], 'a withdrawn term takes no new consent');
  const back = await s.cli('term', 'update', slug, String(term.id), '--active', '--purposes', 'marketing,newsletter', '--channels', 'mail,sms', '--json');
  t.match(back.json, { is_active: true, channels: ['mail', 'sms'] });
  t.equal(back.json.purpose_ids.length, 2, 'the purposes are replaced');
  t.same((await s.api('GET', '/v1/consent-terms')).body.data[0], back.json, 'the API serves what the CLI printed');
  t.equal((await s.api('POST', '/v1/consent-events', { body: { term_id: term.id, method: 'single_opt_in', rules: [rule] } })).status, 201, 'active again');
  t.equal((await s.cli('term', 'update', slug, String(term.id), '--active', '--inactive', '--json')).json.code, 'validation_error');
  t.equal((await s.cli('term', 'update', slug, String(term.id), '--channels', 'fax', '--json')).json.code, 'validation_error');
  t.equal((await s.cli('term', 'update', slug, '999999', '--name', 'X', '--json')).json.code, 'consent_term_not_found');
  t.equal((await s.api('GET', '/v1/consent-events')).body.data.length, 2, 'the history of consents is untouched');
});
