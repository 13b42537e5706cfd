// GET /v1/activities/bounced, /v1/activities/clicks and the four exports (docs/reports.md), against
// real delivery: a sink that answers 550 to some recipients makes the bounces, and clicks are the
// rewritten links of the delivered HTML fetched over HTTP.
import t from 'tap';
import { simpleParser } from 'mailparser';
import { startWorld, mailState, type World } from '../helpers/delivery-world';
import { waitFor } from '../helpers/service';

const LINKS = '<p>Hi <a href="https://example.org/a">a</a> and <a href="https://example.org/b?q=1&amp;r=2">b</a></p>';
const MAIL_FIELDS = ['mail_id', 'msg_id', 'to', 'subject', 'sender', 'status', 'opens', 'clicks', 'received_at', 'queued_at', 'schedule_at',
  'sent_at', 'delay', 'custom_msg_id', 'custom_group_code'];

/** RFC 4180: quoted fields with doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++; } else cell += c;
  }
  if (cell || row.length) { row.push(cell); rows.push(row); }
  return rows;
}

/** The CSV cell we expect for a JSON item value: null empty, formula-looking text prefixed with '. */
const cellOf = (v: unknown): string => (v === null ? '' : typeof v === 'string' && /^[=+\-@]/.test(v) ? `'${v}` : String(v));

/** The tracking links of the copy delivered to `rcpt`, made reachable on the service's real port. */
async function linksOf(w: World, rcpt: string): Promise<{ pixel: string; clicks: string[] }> {
  const m = w.sink.received.find((r) => r.to[0] === rcpt);
  if (!m) throw new Error(`nothing delivered to ${rcpt}`);
  const html = String((await simpleParser(m.raw)).html);
  const local = (u: string): string => w.ts.url + u.replace(/&amp;/g, '&').slice(w.ts.svc.config.publicUrl.length);
  const pixel = /src="([^"]+\/t\/o\/[^"]+)"/.exec(html)?.[1] ?? '';
  return { pixel: local(pixel), clicks: [...html.matchAll(/href="([^"]+\/t\/c\/[^"]+)"/g)].map((x) => local(x[1])) };
}

t.test('bounced, clicks and exports over real delivery', async (t) => {
  const w = await startWorld(t, { script: { reject: (rcpt) => rcpt.startsWith('gone') } });
  const api = w.ts.api;
  const get = async (path: string) => {
    const r = await api('GET', path);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.body;
  };
  const a = await w.send(['ana@example.test', 'gone@example.test'], { html: LINKS, custom_msg_id: 'order-1' });
  const b = await w.send(['bo@example.test', 'gone2@example.test'], { subject: '=1+2 "quoted", yes', custom_group_code: '@grp' });
  const [ana, gone] = a.mailIds;
  const [bo, gone2] = b.mailIds;
  await waitFor(() => mailState(w.ts.svc, ana).status === 3 && mailState(w.ts.svc, bo).status === 3, { what: 'delivered mails sent' });
  await waitFor(() => mailState(w.ts.svc, gone).status === 6 && mailState(w.ts.svc, gone2).status === 6, { what: 'rejected mails bounced' });

  const anaLinks = await linksOf(w, 'ana@example.test');
  const boLinks = await linksOf(w, 'bo@example.test');
  t.equal(anaLinks.clicks.length, 2, 'both links of ana\'s copy are tracked');
  for (const url of [anaLinks.clicks[0], anaLinks.clicks[1], boLinks.clicks[0]]) t.equal((await fetch(url, { redirect: 'manual' })).status, 302);
  t.equal((await fetch(anaLinks.pixel)).status, 200);
  t.equal((await fetch(anaLinks.pixel)).status, 200);

  t.test('GET /v1/activities/bounced: Mail records of status 6 with reason and bounced_at', async (t) => {
    const all = await get('/v1/activities/bounced');
    t.same(all.data.map((m: { mail_id: string }) => m.mail_id), [gone2, gone], 'only the bounced mails, newest first');
    for (const m of all.data) {
      t.same(Object.keys(m), [...MAIL_FIELDS, 'reason', 'bounced_at'], 'the Mail fields, then the bounce');
      t.equal(m.status, 6);
      t.match(m.reason, /^550 .*no such user/, 'the remote reply');
      t.match(m.bounced_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      t.equal(m.sent_at, null);
    }
    t.same(all.pagination, { page: 1, page_size: 20, has_more: false, total_items: 2, total_pages: 1 });
    const ids = async (q: string) => (await get(`/v1/activities/bounced?${q}`)).data.map((m: { mail_id: string }) => m.mail_id);
    t.same(await ids('recipient=gone%40example.test'), [gone], 'exact recipient');
    t.same(await ids('recipient=gone'), [], 'recipient is exact by default');
    t.same(await ids('recipient=gone&recipient_operator=starts_with'), [gone2, gone], 'starts_with');
    t.same(await ids(`msg_id=${a.msgId}`), [gone]);
    t.same(await ids(`mail_id=${gone2}`), [gone2]);
    t.same(await ids('custom_msg_id=order-1'), [gone]);
    t.same(await ids('custom_group_code=%40grp'), [gone2]);
    t.same(await ids('subject=QUOTED'), [gone2], 'partial, case-insensitive subject');
    t.same(await ids('status=3'), [gone2, gone], 'status is fixed: a status parameter is ignored');
    t.same(await ids('opened=opened'), []);
    t.same(await ids('end_date=2020-01-01'), [], 'the window is on reception');
    const p1 = await get('/v1/activities/bounced?page_size=1');
    t.same([p1.data.length, p1.pagination.has_more, p1.pagination.total_items, p1.pagination.total_pages], [1, true, 2, 2]);
    const p2 = await get('/v1/activities/bounced?page_size=1&page=2');
    t.same([p2.data[0].mail_id, p2.pagination.has_more], [gone, false]);
    const p3 = await get('/v1/activities/bounced?page_size=1&page=3');
    t.same([p3.data.length, p3.pagination.has_more], [0, false], 'past the end: empty page');
    const prefix = await get('/v1/activities/bounced?recipient=gone&recipient_operator=starts_with');
    t.equal(prefix.pagination.total_items, null, 'no count for a prefix recipient (as the sent list)');
    for (const bad of ['start_date=2026-02-30', 'sender_id=x']) {
      const r = await api('GET', `/v1/activities/bounced?${bad}`);
      t.same([r.status, r.body.code], [400, 'malformed_request'], bad);
    }
    for (const bad of ['page_size=0', 'page_size=101', 'recipient=a%40b.test&recipient_operator=like']) {
      const r = await api('GET', `/v1/activities/bounced?${bad}`);
      t.same([r.status, r.body.code], [422, 'validation_error'], `${bad}: read, but outside the schema`);
    }
  });

  t.test('GET /v1/activities/clicks: like the opens list, with the clicked URL per event', async (t) => {
    const none = await get('/v1/activities/clicks');
    t.equal(none.data.length, 3, 'one record per click');
    t.equal(none.pagination.total_items, 3);
    for (const c of none.data) {
      t.same(Object.keys(c), ['mail_id', 'msg_id', 'to', 'sender', 'url', 'clicked_at', 'sent_at', 'custom_msg_id', 'custom_group_code']);
      t.match(c.clicked_at, /Z$/);
      t.match(c.sent_at, /Z$/);
      t.equal(c.sender, 'news@brand.test');
    }
    t.same(none.data.filter((c: { to: string }) => c.to === 'ana@example.test').map((c: { url: string }) => c.url).sort(),
      ['https://example.org/a', 'https://example.org/b?q=1&r=2'], 'the original URL of each clicked link');
    t.same(none.data.find((c: { to: string }) => c.to === 'bo@example.test').url, 'https://example.org/a?x=1&y=2');
    const byMail = await get('/v1/activities/clicks?group_by=mail_id');
    t.same(byMail.data.map((r: { mail_id: string; click_count: number }) => [r.mail_id, r.click_count]).sort(), [[ana, 2], [bo, 1]].sort());
    t.match(byMail.data[0], { first_clicked_at: /Z$/, last_clicked_at: /Z$/ });
    t.equal(byMail.pagination.total_items, null, 'grouped lists carry no total');
    const byMsg = await get(`/v1/activities/clicks?group_by=msg_id&msg_id=${a.msgId}`);
    t.same(byMsg.data, [{ ...byMsg.data[0], msg_id: a.msgId, sender: 'news@brand.test', subject: 'Hello', click_count: 2, recipients_clicked: 1,
      rcpt_count: 2, custom_msg_id: 'order-1', custom_group_code: null }]);
    t.same((await get('/v1/activities/clicks?recipient=bo%40example.test')).data.map((c: { mail_id: string }) => c.mail_id), [bo]);
    t.same((await get('/v1/activities/clicks?recipient=an&recipient_operator=starts_with')).data.length, 2);
    t.same((await get(`/v1/activities/clicks?mail_id=${ana}`)).data.length, 2);
    t.same((await get('/v1/activities/clicks?subject=QUOTED')).data.map((c: { to: string }) => c.to), ['bo@example.test'], 'partial subject');
    t.same((await get('/v1/activities/clicks?subject=hello')).data.length, 2);
    t.same((await get('/v1/activities/clicks?end_date=2020-01-01')).data.length, 0, 'the window is on the click time');
    const p1 = await get('/v1/activities/clicks?page_size=2');
    t.same([p1.data.length, p1.pagination.has_more, p1.pagination.total_pages], [2, true, 2]);
    const p2 = await get('/v1/activities/clicks?page_size=2&page=2');
    t.same([p2.data.length, p2.pagination.has_more], [1, false]);
    const g1 = await get('/v1/activities/clicks?group_by=mail_id&page_size=1');
    t.same([g1.data.length, g1.pagination.has_more, g1.pagination.total_items], [1, true, null], 'grouped pages by has_more');
    const bad = await api('GET', '/v1/activities/clicks?group_by=url');
    t.same([bad.status, bad.body.code], [422, 'validation_error'], 'a group_by the enum does not list');
  });

  t.test('exports: CSV (default) and JSON with the list items, every page at once', async (t) => {
    const lists: Array<[string, string]> = [['sent', ''], ['bounced', ''], ['opens', ''], ['opens', 'group_by=mail_id'], ['opens', 'group_by=msg_id'],
      ['clicks', ''], ['clicks', 'group_by=mail_id'], ['clicks', 'group_by=msg_id'], ['sent', `msg_id=${a.msgId}`], ['clicks', 'recipient=bo%40example.test'],
      ['bounced', 'recipient=gone&recipient_operator=starts_with'], ['sent', 'status=6']];
    for (const [list, q] of lists) {
      const listed = (await get(`/v1/activities/${list}?page_size=100&${q}`)).data as Record<string, unknown>[];
      const json = await api('GET', `/v1/activities/${list}/export?format=json&${q}`);
      t.equal(json.status, 200, `${list} ${q} json`);
      t.match(json.headers.get('content-type'), /^application\/json/);
      t.equal(json.headers.get('content-disposition'), `attachment; filename="${list}-export.json"`);
      t.equal(json.headers.get('x-export-truncated'), 'false');
      t.same(json.body, listed, `${list}?${q}: the JSON export holds the list's items`);
      const csv = await api('GET', `/v1/activities/${list}/export?${q}`);
      t.equal(csv.status, 200);
      t.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
      t.equal(csv.headers.get('content-disposition'), `attachment; filename="${list}-export.csv"`);
      t.ok(csv.text.endsWith('\r\n'), 'CRLF records');
      const [header, ...rows] = parseCsv(csv.text);
      const fields = listed.length ? Object.keys(listed[0]) : header;
      t.same(header, fields, `${list}?${q}: the header names the item fields`);
      t.same(rows, listed.map((item) => fields.map((f) => cellOf(item[f]))), `${list}?${q}: one row per item`);
    }
    t.ok(lists.every(([list]) => list), 'every list was exported');

    const sent = parseCsv((await api('GET', '/v1/activities/sent/export?format=csv')).text);
    t.same(sent[0], MAIL_FIELDS);
    const subject = sent[0].indexOf('subject');
    t.ok(sent.slice(1).some((r) => r[subject] === '\'=1+2 "quoted", yes'), 'a formula-looking subject is neutralized, quotes and comma kept');
    t.ok(sent.slice(1).some((r) => r[sent[0].indexOf('custom_group_code')] === '\'@grp'));
    const raw = (await api('GET', '/v1/activities/sent/export')).text;
    t.match(raw, /"'=1\+2 ""quoted"", yes"/, 'RFC 4180 quoting on the wire');
    const bounced = parseCsv((await api('GET', '/v1/activities/bounced/export')).text);
    t.same(bounced[0], [...MAIL_FIELDS, 'reason', 'bounced_at']);
    t.equal(bounced.length, 3);
    const clicks = parseCsv((await api('GET', '/v1/activities/clicks/export')).text);
    t.ok(clicks.slice(1).some((r) => r[clicks[0].indexOf('url')] === 'https://example.org/b?q=1&r=2'));
    const empty = await api('GET', '/v1/activities/clicks/export?end_date=2020-01-01');
    t.same(parseCsv(empty.text), [['mail_id', 'msg_id', 'to', 'sender', 'url', 'clicked_at', 'sent_at', 'custom_msg_id', 'custom_group_code']], 'no rows: the header alone');
    t.same((await api('GET', '/v1/activities/opens/export?format=json&end_date=2020-01-01')).body, []);

    for (const list of ['sent', 'opens', 'bounced', 'clicks']) {
      for (const [bad, status] of [['format=xml', 422], ['format=CSV', 422], ['start_date=yesterday', 400], ['group_by=day&format=json', 422]] as const) {
        if (bad.startsWith('group_by') && (list === 'sent' || list === 'bounced')) continue;
        const r = await api('GET', `/v1/activities/${list}/export?${bad}`);
        t.same([r.status, r.body.code], [status, status === 400 ? 'malformed_request' : 'validation_error'], `${list} ${bad}`);
        t.match(r.headers.get('content-type'), /application\/problem\+json/);
      }
    }
  });

  t.test('scope mail:read and tenant isolation', async (t) => {
    const paths = ['/v1/activities/bounced', '/v1/activities/clicks', '/v1/activities/sent/export', '/v1/activities/opens/export',
      '/v1/activities/bounced/export', '/v1/activities/clicks/export'];
    const sendOnly = await w.ts.cli('apikey', 'create', w.slug, '--scopes', 'mail:send', '--json');
    const reader = await w.ts.cli('apikey', 'create', w.slug, '--scopes', 'mail:read', '--json');
    for (const p of paths) {
      const denied = await api('GET', p, { key: sendOnly.json.api_key });
      t.same([denied.status, denied.body.code], [403, 'forbidden'], `${p} needs mail:read`);
      t.equal((await api('GET', p, { key: reader.json.api_key })).status, 200, `${p} with mail:read`);
      t.equal((await api('GET', p, { key: null })).status, 401);
    }
    const other = await w.ts.tenant();
    const as = { key: other.key, slug: other.slug };
    t.same((await api('GET', '/v1/activities/bounced', as)).body.data, [], 'another instance sees no bounce');
    t.same((await api('GET', '/v1/activities/clicks', as)).body.data, [], 'nor clicks');
    t.same((await api('GET', `/v1/activities/clicks?mail_id=${ana}`, as)).body.data, []);
    for (const list of ['sent', 'opens', 'bounced', 'clicks']) {
      t.same((await api('GET', `/v1/activities/${list}/export?format=json`, as)).body, [], `${list} export of another instance is empty`);
      t.equal(parseCsv((await api('GET', `/v1/activities/${list}/export`, as)).text).length, 1, 'its CSV is the header alone');
    }
  });

  t.test('/openapi.json lists every new endpoint with its scope and query', async (t) => {
    const doc = (await api('GET', '/openapi.json', { key: null, slug: null })).body;
    const params = (p: string) => doc.paths[p].get.parameters.filter((x: { in: string }) => x.in === 'query').map((x: { name: string }) => x.name);
    for (const p of ['/v1/activities/bounced', '/v1/activities/clicks', '/v1/stats/overview',
      ...['sent', 'opens', 'bounced', 'clicks'].map((l) => `/v1/activities/${l}/export`)]) {
      t.ok(doc.paths[p]?.get, p);
      t.equal(doc.paths[p].get['x-scope'], 'mail:read', `${p} scope`);
      t.ok(doc.paths[p].get.responses['400'], `${p} documents 400`);
    }
    t.ok(params('/v1/activities/clicks').includes('group_by'));
    t.ok(params('/v1/activities/clicks').includes('page_size'));
    t.ok(params('/v1/activities/bounced').includes('recipient_operator'));
    t.notOk(params('/v1/activities/bounced').includes('status'), 'status is fixed on bounced');
    for (const l of ['sent', 'opens', 'bounced', 'clicks']) {
      t.ok(params(`/v1/activities/${l}/export`).includes('format'), `${l} export takes format`);
      t.notOk(params(`/v1/activities/${l}/export`).includes('page'), `${l} export has no pages`);
    }
    t.same(params('/v1/stats/overview').sort(), ['end_date', 'start_date', 'tz']);
    for (const s of ['BouncedMail', 'ClickActivity', 'StatsOverview', 'MailExport', 'ClickActivityExport']) t.ok(doc.components.schemas[s], s);
  });
});
