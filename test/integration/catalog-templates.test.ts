import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService, tempDir, type TestService } from '../helpers/service';
import { getTemplateForSend } from '../../src/templates/templates';

function writeFile(name: string, text: string): string {
  const file = path.join(tempDir('estafeta-tpl-'), name);
  fs.writeFileSync(file, text);
  return file;
}

async function addTemplate(s: TestService, slug: string, name: string, ...extra: string[]) {
  const r = await s.cli('template', 'add', slug, '--name', name, '--html-file', writeFile('t.html', `<p>${name}</p>`), ...extra, '--json');
  if (r.code !== 0) throw new Error(`template add failed: ${r.stdout}`);
  return r.json;
}

t.test('template add prints the full template and the API returns it by id with html and config', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const config = writeFile('c.json', JSON.stringify({ rows: [{ id: 1 }] }));
  const text = writeFile('t.txt', 'Hello there');
  const added = await s.cli('template', 'add', slug, '--name', 'Welcome', '--subject', 'Hi {{name}}', '--html-file', writeFile('w.html', '<h1>Welcome</h1>'),
    '--text-file', text, '--status', 'public', '--provider', 'bee', '--description', 'first mail', '--config-file', config, '--json');
  t.equal(added.code, 0, added.stdout);
  t.match(added.json, { name: 'Welcome', subject: 'Hi {{name}}', status: 'public', provider: 'bee', description: 'first mail', html: '<h1>Welcome</h1>', config: { rows: [{ id: 1 }] } });
  t.type(added.json.id, 'number');

  const got = await s.api('GET', `/v1/mail-templates/${added.json.id}`);
  t.equal(got.status, 200);
  t.same(Object.keys(got.body).sort(), ['config', 'created_at', 'description', 'html', 'id', 'name', 'provider', 'status', 'subject', 'updated_at']);
  t.same(got.body, added.json, 'the CLI prints the same object the API serves');
  t.match(got.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  // Defaults: draft, ckeditor, no subject, description or config.
  const plain = await addTemplate(s, slug, 'Plain');
  t.match(plain, { status: 'draft', provider: 'ckeditor', subject: null, description: null, config: null });
});

t.test('the list omits html and config, filters by partial name and by status, and pages by 10', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const empty = await s.api('GET', '/v1/mail-templates');
  t.same(empty.body, { data: [], pagination: { page: 1, page_size: 10, has_more: false, total_items: 0, total_pages: 0 } });

  for (let i = 1; i <= 11; i++) await addTemplate(s, slug, `News ${i}`);
  await addTemplate(s, slug, 'Promo 100% off', '--status', 'public');
  await addTemplate(s, slug, 'Promo 1000 off', '--status', 'public');
  await addTemplate(s, slug, 'snake_case', '--status', 'public');

  const first = await s.api('GET', '/v1/mail-templates');
  t.equal(first.status, 200);
  t.equal(first.body.data.length, 10, 'default page_size is 10');
  t.same(first.body.pagination, { page: 1, page_size: 10, has_more: true, total_items: 14, total_pages: 2 });
  for (const el of first.body.data) {
    t.notOk('html' in el, 'no html in list elements');
    t.notOk('config' in el, 'no config in list elements');
  }
  t.same(Object.keys(first.body.data[0]).sort(), ['created_at', 'description', 'id', 'name', 'provider', 'status', 'subject', 'updated_at']);
  const second = await s.api('GET', '/v1/mail-templates?page=2');
  t.same(second.body.pagination, { page: 2, page_size: 10, has_more: false, total_items: 14, total_pages: 2 });
  t.equal(second.body.data.length, 4);
  const beyond = await s.api('GET', '/v1/mail-templates?page=9');
  t.same(beyond.body.data, []);
  t.equal(beyond.body.pagination.has_more, false);
  t.equal((await s.api('GET', '/v1/mail-templates?page_size=100')).body.data.length, 14);

  const names = async (qs: string) => ((await s.api('GET', `/v1/mail-templates?${qs}`)).body.data as Array<{ name: string }>).map((d) => d.name);
  t.same(await names('name=NEWS%201&page_size=100'), ['News 1', 'News 10', 'News 11'], 'partial and case-insensitive');
  t.same(await names('name=100%25'), ['Promo 100% off'], '% is literal');
  t.same(await names('name=e_c'), ['snake_case'], '_ is literal');
  t.same(await names('status=public'), ['Promo 100% off', 'Promo 1000 off', 'snake_case']);
  t.equal((await s.api('GET', '/v1/mail-templates?status=draft&page_size=100')).body.pagination.total_items, 11);
  t.same(await names('status=public&name=promo'), ['Promo 100% off', 'Promo 1000 off']);
});

t.test('malformed list parameters are 400 malformed_request; values out of the schema are 422', async (t) => {
  const s = await startTestService(t);
  await s.tenant();
  for (const qs of ['page=abc', 'page=1.5', 'page_size=', 'status=draft&status=public']) {
    const r = await s.api('GET', `/v1/mail-templates?${qs}`);
    t.same([r.status, r.body.code], [400, 'malformed_request'], qs);
    t.notOk('errors' in r.body, `${qs}: errors[] is a 422 member`);
  }
  for (const [qs, pointer, code] of [['page=0', '/page', 'greater_than_equal'], ['page_size=0', '/page_size', 'greater_than_equal'],
    ['page_size=101', '/page_size', 'less_than_equal'], ['status=archived', '/status', 'enum']]) {
    const r = await s.api('GET', `/v1/mail-templates?${qs}`);
    t.same([r.status, r.body.code, r.body.errors?.[0]?.pointer, r.body.errors?.[0]?.code], [422, 'validation_error', pointer, code], qs);
  }
});

t.test('an update is visible on the next GET; a deleted template is not found anywhere', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const tpl = await addTemplate(s, slug, 'Draft one', '--subject', 'Old', '--description', 'desc');
  const upd = await s.cli('template', 'update', slug, String(tpl.id), '--status', 'public', '--subject', 'New', '--html-file', writeFile('n.html', '<p>new</p>'), '--description', '', '--json');
  t.equal(upd.code, 0, upd.stdout);
  t.match(upd.json, { id: tpl.id, name: 'Draft one', status: 'public', subject: 'New', html: '<p>new</p>', description: null });
  const got = await s.api('GET', `/v1/mail-templates/${tpl.id}`);
  t.match(got.body, { status: 'public', subject: 'New', html: '<p>new</p>', description: null, name: 'Draft one' });
  t.same((await s.api('GET', '/v1/mail-templates?status=public')).body.data.map((d: { id: number }) => d.id), [tpl.id]);

  const del = await s.cli('template', 'delete', slug, String(tpl.id), '--json');
  t.same(del.json, { id: tpl.id, deleted: true });
  const gone = await s.api('GET', `/v1/mail-templates/${tpl.id}`);
  t.equal(gone.status, 404);
  t.equal(gone.body.code, 'mail_template_not_found');
  t.match(gone.body.type, /mail-template-not-found$/);
  t.equal((await s.api('GET', '/v1/mail-templates')).body.pagination.total_items, 0);
  t.equal((await s.cli('template', 'update', slug, String(tpl.id), '--name', 'x', '--json')).json.code, 'mail_template_not_found');
  t.equal((await s.cli('template', 'delete', slug, String(tpl.id), '--json')).json.code, 'mail_template_not_found');
});

t.test('unknown ids are 404 mail_template_not_found; a non-integer id is 422', async (t) => {
  const s = await startTestService(t);
  await s.tenant();
  const r = await s.api('GET', '/v1/mail-templates/999');
  t.equal(r.status, 404);
  t.equal(r.body.code, 'mail_template_not_found');
  t.equal((await s.api('GET', '/v1/mail-templates/abc')).status, 422);
});

t.test('template CLI failures print the spec codes', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const html = writeFile('x.html', '<p>x</p>');
  const cases: Array<[string[], string, string?]> = [
    [['template', 'add', slug, '--name', 'x', '--html-file', html, '--status', 'live'], 'validation_error', '/status'],
    [['template', 'add', slug, '--name', 'x', '--html-file', html, '--provider', 'word'], 'validation_error', '/provider'],
    [['template', 'add', slug, '--name', 'x', '--html-file', '/no/such/file.html'], 'validation_error', '/html'],
    [['template', 'add', slug, '--name', 'x', '--html-file', writeFile('empty.html', ' \n')], 'template_content_required'],
    [['template', 'add', slug, '--name', 'x'], 'validation_error', '/html'],
    [['template', 'add', slug, '--html-file', html], 'validation_error', '/name'],
    [['template', 'add', slug, '--name', 'x', '--html-file', html, '--subject', 's'.repeat(255)], 'validation_error', '/subject'],
    [['template', 'add', slug, '--name', 'x', '--html-file', html, '--config-file', html], 'validation_error', '/config'],
    [['template', 'add', 'nobody', '--name', 'x', '--html-file', html], 'instance_not_found'],
    [['template', 'update', slug, '12', '--name', 'x'], 'mail_template_not_found'],
    [['template', 'update', slug, 'abc', '--name', 'x'], 'validation_error', '/id'],
    [['template', 'delete', slug, '12'], 'mail_template_not_found'],
  ];
  for (const [args, code, pointer] of cases) {
    const r = await s.cli(...args, '--json');
    t.not(r.code, 0, args.join(' '));
    t.equal(r.json.code, code, args.join(' '));
    t.type(r.json.detail, 'string');
    if (pointer) t.equal(r.json.errors[0].pointer, pointer, args.join(' '));
  }
  t.equal((await s.api('GET', '/v1/mail-templates')).body.pagination.total_items, 0, 'nothing was written');
});

t.test('the send path reads a live template with its text; a deleted one is gone', async (t) => {
  const s = await startTestService(t);
  const { slug, instance } = await s.tenant();
  const tpl = await addTemplate(s, slug, 'Receipt', '--subject', 'Your receipt', '--text-file', writeFile('r.txt', 'plain receipt'));
  t.same(getTemplateForSend(s.svc.db, instance.id, tpl.id), { status: 'draft', subject: 'Your receipt', html: '<p>Receipt</p>', text: 'plain receipt' });
  await s.cli('template', 'update', slug, String(tpl.id), '--status', 'public', '--json');
  t.equal(getTemplateForSend(s.svc.db, instance.id, tpl.id)?.status, 'public');
  t.equal(getTemplateForSend(s.svc.db, instance.id + 1, tpl.id), undefined, 'another instance does not find it');
  await s.cli('template', 'delete', slug, String(tpl.id), '--json');
  t.equal(getTemplateForSend(s.svc.db, instance.id, tpl.id), undefined);
});
