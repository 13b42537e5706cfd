import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService, tempDir } from '../helpers/service';

const readPaths: Array<[string, string]> = [
  ['/v1/mail-templates', 'templates:read'], ['/v1/fields', 'field:read'], ['/v1/forms', 'form:read'],
  ['/v1/mail-restrictions', 'mail:read'], ['/v1/mail-unsubscribes', 'mail:read'], ['/v1/mail-complaints', 'mail:read'],
];

t.test('each catalog endpoint needs its scope: a mail:send key gets 403, the right scope 200', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const html = path.join(tempDir(), 'a.html');
  fs.writeFileSync(html, '<p>a</p>');
  const tpl = await s.cli('template', 'add', slug, '--name', 'A', '--html-file', html, '--json');
  const form = await s.cli('form', 'add', slug, '--name', 'F', '--kind', 'advanced', '--type', 'acquisition', '--json');
  const sup = await s.cli('suppression', 'add', slug, 'a@b.test', '--list', 'complaints', '--json');
  const sendOnly = (await s.cli('apikey', 'create', slug, '--scopes', 'mail:send', '--json')).json.api_key;
  const detail: Array<[string, string]> = [
    [`/v1/mail-templates/${tpl.json.id}`, 'templates:read'], [`/v1/forms/${form.json.id}`, 'form:read'], [`/v1/mail-complaints/${sup.json.id}`, 'mail:read'],
  ];
  for (const [p, scope] of [...readPaths, ...detail]) {
    const denied = await s.api('GET', p, { key: sendOnly });
    t.equal(denied.status, 403, `${p} with mail:send`);
    t.equal(denied.body.code, 'forbidden');
    const key = (await s.cli('apikey', 'create', slug, '--scopes', scope, '--json')).json.api_key;
    t.equal((await s.api('GET', p, { key })).status, 200, `${p} with ${scope}`);
    t.equal((await s.api('GET', p, { key: null })).status, 401, `${p} without a key`);
  }
  // A scope for another catalog does not open this one.
  const fieldKey = (await s.cli('apikey', 'create', slug, '--scopes', 'field:read', '--json')).json.api_key;
  t.equal((await s.api('GET', '/v1/forms', { key: fieldKey })).status, 403);
  t.equal((await s.api('GET', '/v1/mail-templates', { key: fieldKey })).status, 403);
});

t.test('a second tenant never sees the first one\'s catalog and gets 404 for its ids', async (t) => {
  const s = await startTestService(t);
  const a = await s.tenant();
  const html = path.join(tempDir(), 'a.html');
  fs.writeFileSync(html, '<p>a</p>');
  const tpl = (await s.cli('template', 'add', a.slug, '--name', 'Secret', '--html-file', html, '--json')).json;
  await s.cli('field', 'add', a.slug, '--name', 'Secret', '--key', 'SECRET', '--type', 'text', '--json');
  const form = (await s.cli('form', 'add', a.slug, '--name', 'Secret', '--kind', 'advanced', '--type', 'acquisition', '--field', 'SECRET', '--json')).json;
  const ids: Record<string, number> = {};
  for (const list of ['restrictions', 'unsubscribes', 'complaints']) {
    ids[list] = (await s.cli('suppression', 'add', a.slug, `${list}@victim.test`, '--list', list, '--json')).json.id;
  }
  const b = await s.tenant();
  t.not(a.slug, b.slug);

  t.equal((await s.api('GET', '/v1/mail-templates', { key: a.key, slug: a.slug })).body.pagination.total_items, 1, 'the owner sees it');
  for (const p of ['/v1/mail-templates', '/v1/forms', '/v1/mail-restrictions', '/v1/mail-unsubscribes', '/v1/mail-complaints']) {
    const r = await s.api('GET', p);
    t.equal(r.status, 200, p);
    t.same(r.body.data, [], `${p} is empty for the other tenant`);
  }
  const fields = (await s.api('GET', '/v1/fields')).body.data as Array<{ field_key: string; id: number }>;
  t.notOk(fields.some((f) => f.field_key === 'SECRET'), 'fields are per instance');
  t.equal(fields.length, 6);
  const notFound: Array<[string, string]> = [
    [`/v1/mail-templates/${tpl.id}`, 'mail_template_not_found'], [`/v1/forms/${form.id}`, 'form_not_found'],
    [`/v1/mail-restrictions/${ids.restrictions}`, 'suppression_not_found'], [`/v1/mail-unsubscribes/${ids.unsubscribes}`, 'suppression_not_found'],
    [`/v1/mail-complaints/${ids.complaints}`, 'suppression_not_found'],
  ];
  for (const [p, code] of notFound) {
    const r = await s.api('GET', p);
    t.equal(r.status, 404, p);
    t.equal(r.body.code, code, p);
  }
  // The CLI is tenant-scoped too: b cannot edit or delete a's template, nor remove a's suppressions.
  t.equal((await s.cli('template', 'update', b.slug, String(tpl.id), '--name', 'pwned', '--json')).json.code, 'mail_template_not_found');
  t.equal((await s.cli('template', 'delete', b.slug, String(tpl.id), '--json')).json.code, 'mail_template_not_found');
  t.equal((await s.cli('suppression', 'remove', b.slug, 'complaints@victim.test', '--list', 'complaints', '--json')).json.code, 'suppression_not_found');
  // b may reuse a's field key: keys are unique per instance.
  t.equal((await s.cli('field', 'add', b.slug, '--name', 'Mine', '--key', 'SECRET', '--type', 'text', '--json')).code, 0);
  t.equal((await s.cli('form', 'add', b.slug, '--name', 'x', '--kind', 'advanced', '--type', 'update', '--field', 'EMAIL', '--json')).json.items[0].field.id,
    fields.find((f) => f.field_key === 'EMAIL')?.id, "b's form points at b's own EMAIL field");
  t.match((await s.api('GET', `/v1/mail-templates/${tpl.id}`, { key: a.key, slug: a.slug })).body, { name: 'Secret' }, "a's template is untouched");
});

t.test('the catalog endpoints are in /openapi.json with their schemas and scopes', async (t) => {
  const s = await startTestService(t);
  const doc = (await s.api('GET', '/openapi.json', { key: null, slug: null })).body;
  const cases: Array<[string, string, string]> = [
    ['/v1/mail-templates', 'templates:read', 'MailTemplateSummary'], ['/v1/mail-templates/{template_id}', 'templates:read', 'MailTemplate'],
    ['/v1/fields', 'field:read', 'Field'], ['/v1/forms', 'form:read', 'Form'], ['/v1/forms/{id}', 'form:read', 'Form'],
    ['/v1/mail-restrictions', 'mail:read', 'Suppression'], ['/v1/mail-unsubscribes/{id}', 'mail:read', 'Suppression'], ['/v1/mail-complaints', 'mail:read', 'Suppression'],
  ];
  for (const [p, scope, schema] of cases) {
    const op = doc.paths[p]?.get;
    t.ok(op, p);
    t.equal(op?.['x-scope'], scope, p);
    t.match(JSON.stringify(op?.responses['200']), `#/components/schemas/${schema}"`, p);
    t.ok(doc.components.schemas[schema], schema);
  }
  t.ok(doc.components.schemas.FormItem, 'the item shape is documented');
  const names = (doc.paths['/v1/mail-templates'].get.parameters as Array<{ name: string }>).map((x) => x.name);
  t.match(names, ['page', 'page_size', 'name', 'status']);
});
