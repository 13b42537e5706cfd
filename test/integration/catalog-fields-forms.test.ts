import t from 'tap';
import { startTestService } from '../helpers/service';

const systemKeys = ['EMAIL', 'PHONE', 'FIRST_NAME', 'LAST_NAME', 'UNIQUECODE', 'ADDRESS'];

t.test('GET /v1/fields lists the six system fields of a new instance, exactly shaped', async (t) => {
  const s = await startTestService(t);
  await s.tenant();
  const r = await s.api('GET', '/v1/fields');
  t.equal(r.status, 200);
  t.same(r.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: 6, total_pages: 1 });
  t.same(r.body.data.map((f: { field_key: string }) => f.field_key).sort(), [...systemKeys].sort());
  for (const f of r.body.data) {
    t.same(Object.keys(f).sort(), ['config', 'created_at', 'field_key', 'id', 'is_active', 'is_system', 'name', 'type', 'updated_at']);
    t.match(f, { is_system: true, is_active: true, config: null });
  }
  t.equal(r.body.data.find((f: { field_key: string }) => f.field_key === 'EMAIL').type, 'email');
});

t.test('field add canonicalizes keys, refuses system and duplicate keys and bad types; is_active filters', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const added = await s.cli('field', 'add', slug, '--name', 'Fecha de nacimiento', '--key', 'fecha de  nacimiento', '--type', 'date', '--json');
  t.equal(added.code, 0, added.stdout);
  t.match(added.json, { name: 'Fecha de nacimiento', field_key: 'FECHA_DE_NACIMIENTO', type: 'date', is_system: false, is_active: true, config: null });
  const accented = await s.cli('field', 'add', slug, '--name', 'Región', '--key', 'región-comuna', '--type', 'select', '--config', '{"options":["a","b"]}', '--json');
  t.match(accented.json, { field_key: 'REGION_COMUNA', config: { options: ['a', 'b'] } });
  const inactive = await s.cli('field', 'add', slug, '--name', 'Old', '--key', 'OLD', '--type', 'text', '--inactive', '--json');
  t.equal(inactive.json.is_active, false);

  const cases: Array<[string[], string]> = [
    [['--name', 'Dup', '--key', 'Fecha-de-Nacimiento', '--type', 'date'], 'field_key_already_exists'],
    [['--name', 'Mail', '--key', 'email', '--type', 'email'], 'field_key_reserved'],
    [['--name', 'Name', '--key', 'first name', '--type', 'text'], 'field_key_reserved'],
    [['--name', 'Bad', '--key', 'BAD', '--type', 'color'], 'validation_error'],
    [['--name', 'Empty', '--key', '--', '--type', 'text'], 'validation_error'],
    [['--name', 'Cfg', '--key', 'CFG', '--type', 'text', '--config', '[1]'], 'validation_error'],
    [['--name', 'NoType', '--key', 'NOTYPE'], 'validation_error'],
  ];
  for (const [args, code] of cases) {
    const r = await s.cli('field', 'add', slug, ...args, '--json');
    t.not(r.code, 0, args.join(' '));
    t.equal(r.json.code, code, args.join(' '));
  }
  t.equal((await s.cli('field', 'add', 'nobody', '--name', 'x', '--key', 'X', '--type', 'text', '--json')).json.code, 'instance_not_found');

  const keys = async (qs: string) => ((await s.api('GET', `/v1/fields?${qs}`)).body.data as Array<{ field_key: string }>).map((f) => f.field_key);
  t.same(await keys('is_active=false'), ['OLD']);
  t.same(await keys('is_active=true'), [...systemKeys, 'FECHA_DE_NACIMIENTO', 'REGION_COMUNA']);
  t.equal((await keys('')).length, 9);
  const disabled = await s.cli('field', 'disable', slug, 'fecha_de_nacimiento', '--json');
  t.equal(disabled.json.is_active, false);
  t.same(await keys('is_active=false'), ['FECHA_DE_NACIMIENTO', 'OLD'], 'a CLI change is seen on the next request');

  const paged = await s.api('GET', '/v1/fields?page_size=4&page=3');
  t.same(paged.body.pagination, { page: 3, page_size: 4, has_more: false, total_items: 9, total_pages: 3 });
  t.equal(paged.body.data.length, 1);
  for (const [qs, status] of [['is_active=maybe', 400], ['is_active=1x', 400], ['page=abc', 400], ['page=0', 422], ['page_size=101', 422]] as const) {
    const r = await s.api('GET', `/v1/fields?${qs}`);
    t.same([r.status, r.body.code], [status, status === 400 ? 'malformed_request' : 'validation_error'], qs);
  }
});

t.test('forms come with resolved items; kind filters; unknown ids are form_not_found', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const empty = await s.api('GET', '/v1/forms');
  t.same(empty.body, { data: [], pagination: { page: 1, page_size: 20, has_more: false, total_items: 0, total_pages: 0 } });

  await s.cli('field', 'add', slug, '--name', 'Company', '--key', 'COMPANY', '--type', 'text', '--json');
  const adv = await s.cli('form', 'add', slug, '--name', 'Signup', '--kind', 'advanced', '--type', 'acquisition',
    '--field', 'EMAIL:required', '--field', 'company', '--settings', '{"title":"Join us"}', '--default', '--json');
  t.equal(adv.code, 0, adv.stdout);
  t.match(adv.json, { name: 'Signup', kind: 'advanced', type: 'acquisition', dataset_id: null, is_default: true, is_active: true, settings: { title: 'Join us' } });
  t.match(adv.json.public_token, /^[a-z2-7]{24}$/);
  t.same(Object.keys(adv.json).sort(), ['created_at', 'dataset_id', 'id', 'is_active', 'is_default', 'items', 'kind', 'name', 'public_token', 'settings', 'type', 'updated_at']);
  t.equal(adv.json.items.length, 2);
  t.match(adv.json.items[0], { position: 1, kind: 'field', field: { name: 'Email', field_key: 'EMAIL', type: 'email' }, term_id: null, label: 'Email', is_required: true, config: null });
  t.match(adv.json.items[1], { position: 2, kind: 'field', field: { field_key: 'COMPANY', type: 'text' }, is_required: false });
  const consent = await s.cli('form', 'add', slug, '--name', 'Preferences', '--kind', 'consent', '--type', 'update', '--field', 'EMAIL', '--inactive', '--json');
  t.match(consent.json, { kind: 'consent', type: 'update', is_active: false, is_default: false, settings: null });

  const list = await s.api('GET', '/v1/forms');
  t.equal(list.status, 200);
  t.same(list.body.data, [adv.json, consent.json], 'the list carries the same resolved items as the CLI output');
  t.same((await s.api('GET', '/v1/forms?kind=consent')).body.data.map((f: { id: number }) => f.id), [consent.json.id]);
  t.same((await s.api('GET', '/v1/forms?kind=advanced')).body.data.map((f: { id: number }) => f.id), [adv.json.id]);
  const page2 = await s.api('GET', '/v1/forms?page_size=1&page=2');
  t.same(page2.body.pagination, { page: 2, page_size: 1, has_more: false, total_items: 2, total_pages: 2 });
  t.equal(page2.body.data[0].items.length, 1, 'items resolved on every page');
  t.equal((await s.api('GET', '/v1/forms?kind=simple')).body.code, 'validation_error', 'a kind the enum does not list: read, but outside the schema');

  const one = await s.api('GET', `/v1/forms/${adv.json.id}`);
  t.same(one.body, adv.json);
  const missing = await s.api('GET', '/v1/forms/9999');
  t.equal(missing.status, 404);
  t.equal(missing.body.code, 'form_not_found');

  const cases: Array<[string[], string]> = [
    [['--name', 'x', '--kind', 'fancy', '--type', 'acquisition'], 'validation_error'],
    [['--name', 'x', '--kind', 'advanced', '--type', 'delete'], 'validation_error'],
    [['--name', 'x', '--kind', 'advanced', '--type', 'update', '--field', 'NOPE'], 'field_not_found'],
    [['--name', 'x', '--kind', 'consent', '--type', 'update', '--term', '424242'], 'consent_term_not_found'],
    // Spec, Form.kind: a consent form is "identifier plus consent items".
    [['--name', 'x', '--kind', 'consent', '--type', 'update', '--field', 'FIRST_NAME'], 'validation_error'],
  ];
  await s.cli('field', 'disable', slug, 'COMPANY', '--json');
  cases.push([['--name', 'x', '--kind', 'advanced', '--type', 'update', '--field', 'COMPANY'], 'validation_error']);
  for (const [args, code] of cases) {
    const r = await s.cli('form', 'add', slug, ...args, '--json');
    t.not(r.code, 0, args.join(' '));
    t.equal(r.json.code, code, args.join(' '));
  }
  t.equal((await s.api('GET', '/v1/forms')).body.pagination.total_items, 2, 'failed adds wrote nothing');
});

t.test("a consent form carries consent items pointing at the instance's terms", async (t) => {
  const s = await startTestService(t);
  const { slug, instance } = await s.tenant();
  const other = await s.tenant();
  // A term written straight into the store of the running service (the term CLI is another noun).
  const insertTerm = (instanceId: number) => Number(s.svc.db
    .prepare("INSERT INTO consent_terms (instance_id, name, type, channels, is_active, created_at, updated_at) VALUES (?, 'Privacy', 'data_processing', '[\"email\"]', 1, 0, 0)")
    .run(instanceId).lastInsertRowid);
  const termId = insertTerm(instance.id);
  const foreignTerm = insertTerm(other.instance.id);
  const r = await s.cli('form', 'add', slug, '--name', 'Consent', '--kind', 'consent', '--type', 'acquisition', '--field', 'EMAIL:required', '--term', String(termId), '--json');
  t.equal(r.code, 0, r.stdout);
  t.match(r.json.items, [
    { position: 1, kind: 'field', field: { field_key: 'EMAIL' }, term_id: null },
    { position: 2, kind: 'consent', field: null, term_id: termId, label: null, is_required: true },
  ]);
  const foreign = await s.cli('form', 'add', slug, '--name', 'x', '--kind', 'consent', '--type', 'acquisition', '--term', String(foreignTerm), '--json');
  t.equal(foreign.json.code, 'consent_term_not_found', "another instance's term cannot be attached");
  t.equal((await s.cli('form', 'add', slug, '--name', 'x', '--kind', 'consent', '--type', 'acquisition', '--term', 'abc', '--json')).json.code, 'validation_error');
});
