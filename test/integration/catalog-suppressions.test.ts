import t from 'tap';
import { startTestService } from '../helpers/service';

const lists = [['restrictions', '/v1/mail-restrictions'], ['unsubscribes', '/v1/mail-unsubscribes'], ['complaints', '/v1/mail-complaints']] as const;

t.test('suppression add puts an address on one list; the API lists and gets it there only', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  for (const [, path] of lists) {
    t.same((await s.api('GET', path)).body, { data: [], pagination: { page: 1, page_size: 20, has_more: false, total_items: 0, total_pages: 0 } }, path);
  }
  const added = await s.cli('suppression', 'add', slug, 'Ana@Example.COM', '--list', 'unsubscribes', '--reason', 'asked by phone', '--json');
  t.equal(added.code, 0, added.stdout);
  t.match(added.json, { recipient: 'Ana@example.com', reason: 'asked by phone', source: 'manual', mail_id: null });
  const again = await s.cli('suppression', 'add', slug, 'ana@example.com', '--list', 'unsubscribes', '--reason', 'other', '--json');
  t.same(again.json, added.json, 'idempotent, in any case: the first record stays');

  const list = await s.api('GET', '/v1/mail-unsubscribes');
  t.equal(list.status, 200);
  const record = added.json;
  t.same(list.body.data, [record]);
  t.same(Object.keys(list.body.data[0]).sort(), ['created_at', 'id', 'mail_id', 'reason', 'recipient', 'source']);
  t.same((await s.api('GET', `/v1/mail-unsubscribes/${record.id}`)).body, record);
  for (const path of ['/v1/mail-restrictions', '/v1/mail-complaints']) {
    t.equal((await s.api('GET', path)).body.pagination.total_items, 0, `${path} is another list`);
    const other = await s.api('GET', `${path}/${record.id}`);
    t.equal(other.status, 404, `${path}/{id} of another list`);
    t.equal(other.body.code, 'suppression_not_found');
  }

  const removed = await s.cli('suppression', 'remove', slug, 'ANA@example.com', '--list', 'unsubscribes', '--json');
  t.same(removed.json, record, 'the removed record, as the API showed it');
  t.equal((await s.api('GET', '/v1/mail-unsubscribes')).body.pagination.total_items, 0, 'removal is seen on the next request');
  t.equal((await s.api('GET', `/v1/mail-unsubscribes/${record.id}`)).body.code, 'suppression_not_found');
});

t.test('the recipient filter is partial, case-insensitive, with % and _ literal', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const addresses = ['john@example.com', 'bigjohn@example.com', 'john@example.com.ar', 'jo_hn@x.test', 'joxhn@x.test', 'a%b@x.test', 'ab@x.test'];
  for (const a of addresses) t.equal((await s.cli('suppression', 'add', slug, a, '--list', 'restrictions', '--json')).code, 0, a);
  const found = async (q: string) => ((await s.api('GET', `/v1/mail-restrictions?recipient=${q}`)).body.data as Array<{ recipient: string }>).map((r) => r.recipient);
  t.same(await found('JOHN%40EXAMPLE.COM'), ['john@example.com', 'bigjohn@example.com', 'john@example.com.ar'], 'longer addresses that contain it are returned too');
  t.same(await found('jo_hn'), ['jo_hn@x.test'], '_ is literal');
  t.same(await found('a%25b'), ['a%b@x.test'], '% is literal');
  t.same(await found('nobody'), []);
  // An internationalized domain is stored in ASCII form; the filter takes it as people write it.
  t.equal((await s.cli('suppression', 'add', slug, 'x@Bücher.TEST', '--list', 'restrictions', '--json')).json.recipient, 'x@xn--bcher-kva.test');
  t.same(await found(encodeURIComponent('x@Bücher.TEST')), ['x@xn--bcher-kva.test'], 'x@Bücher.TEST finds x@xn--bcher-kva.test');
  t.same(await found('x%40xn--bcher'), ['x@xn--bcher-kva.test'], 'the stored form, partial, as well');
  await s.cli('suppression', 'remove', slug, 'x@xn--bcher-kva.test', '--list', 'restrictions', '--json');
  const paged = await s.api('GET', '/v1/mail-restrictions?page_size=3&page=2');
  t.same(paged.body.pagination, { page: 2, page_size: 3, has_more: true, total_items: 7, total_pages: 3 });
  // Spec, Errors: unreadable is 400 "before schema validation"; read but out of range is 422.
  for (const [qs, status, code] of [['page=abc', 400, 'malformed_request'], ['page_size=1.5', 400, 'malformed_request'],
    ['page=0', 422, 'validation_error'], ['page_size=101', 422, 'validation_error'], ['page_size=-1', 422, 'validation_error']] as const) {
    const r = await s.api('GET', `/v1/mail-complaints?${qs}`);
    t.same([r.status, r.body.code], [status, code], qs);
  }
  t.equal((await s.api('GET', '/v1/mail-complaints/abc')).status, 422);
});

t.test('suppression CLI failures print the spec codes', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const cases: Array<[string[], string]> = [
    [['add', slug, 'x@y.test'], 'validation_error'],
    [['add', slug, 'x@y.test', '--list', 'bounces'], 'validation_error'],
    [['add', slug, 'not-an-address', '--list', 'complaints'], 'validation_error'],
    [['add', 'nobody', 'x@y.test', '--list', 'complaints'], 'instance_not_found'],
    [['remove', slug, 'x@y.test', '--list', 'complaints'], 'suppression_not_found'],
    [['remove', slug, 'x@y.test', '--list', 'nope'], 'validation_error'],
  ];
  for (const [args, code] of cases) {
    const r = await s.cli('suppression', ...args, '--json');
    t.not(r.code, 0, args.join(' '));
    t.equal(r.json.code, code, args.join(' '));
    t.type(r.json.detail, 'string');
  }
});
