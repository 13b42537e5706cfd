// GET /v1/stats/overview (docs/reports.md) over real delivery: a sink answering 550 to one
// recipient, opens and clicks by fetching the tracking links of the delivered copy.
import t from 'tap';
import { simpleParser } from 'mailparser';
import { startWorld, mailState } from '../helpers/delivery-world';
import { waitFor } from '../helpers/service';

const localDate = (tz: string, at = Date.now()): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(at));

t.test('the overview counts the window\'s mails by status, their engagement and the rates', async (t) => {
  const w = await startWorld(t, { script: { reject: (rcpt) => rcpt.startsWith('gone') } });
  const api = w.ts.api;
  const q = await w.send(['ana@example.test', 'bo@example.test', 'gone@example.test']);
  const [ana, bo, gone] = q.mailIds;
  await waitFor(() => [ana, bo].every((id) => mailState(w.ts.svc, id).status === 3) && mailState(w.ts.svc, gone).status === 6, { what: 'outcomes' });
  const m = w.sink.received.find((r) => r.to[0] === 'ana@example.test');
  const html = String((await simpleParser(m?.raw ?? '')).html);
  const local = (u: string): string => w.ts.url + u.replace(/&amp;/g, '&').slice(w.ts.svc.config.publicUrl.length);
  const pixel = local(/src="([^"]+\/t\/o\/[^"]+)"/.exec(html)?.[1] ?? '');
  const click = local(/href="([^"]+\/t\/c\/[^"]+)"/.exec(html)?.[1] ?? '');
  for (const url of [pixel, pixel, click]) t.ok((await fetch(url, { redirect: 'manual' })).status < 400, url);

  const r = await api('GET', '/v1/stats/overview');
  t.equal(r.status, 200);
  const o = r.body;
  t.same(Object.keys(o), ['start', 'end', 'tz', 'total', 'test', 'status', 'opens', 'clicks', 'unique_opened', 'unique_clicked', 'rates']);
  t.match(o.start, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  const days = (Date.now() - Date.parse(o.start)) / 86_400_000;
  t.ok(days > 88 && days < 93, 'default window: the last 3 months');
  t.equal(o.end, null, 'open-ended without end_date');
  t.equal(o.tz, 'UTC', 'the instance zone');
  t.equal(o.total, 3);
  t.same(o.status, { received: 0, queued: 0, sent: 2, dropped: 0, deferred: 0, bounced: 1, onhold: 0 });
  t.same([o.opens, o.clicks, o.unique_opened, o.unique_clicked], [2, 1, 1, 1]);
  t.same(o.rates, { delivery_rate: 0.6667, bounce_rate: 0.3333, open_rate: 0.5, click_rate: 0.5, click_to_open_rate: 1 });

  const today = localDate('Pacific/Kiritimati');
  const day = await api('GET', `/v1/stats/overview?start_date=${today}&end_date=${today}&tz=Pacific/Kiritimati`);
  t.equal(day.body.total, 3, 'local dates in tz');
  t.equal(day.body.tz, 'Pacific/Kiritimati');
  t.equal(Date.parse(day.body.end) - Date.parse(day.body.start), 86_400_000, 'end_date is inclusive: the window ends where the next local day starts');
  t.equal((await api('GET', `/v1/stats/overview?start_date=${today}&end_date=${today}&tz=Pacific/Pago_Pago`)).body.total, 0, 'another zone, another day');
  t.equal((await api('GET', '/v1/stats/overview?tz=Mars/Olympus')).body.tz, 'UTC', 'an invalid zone is ignored');
  const empty = await api('GET', '/v1/stats/overview?start_date=2020-01-01&end_date=2020-01-31');
  t.same(empty.body, {
    start: '2020-01-01T00:00:00Z', end: '2020-02-01T00:00:00Z', tz: 'UTC', total: 0, test: 0,
    status: { received: 0, queued: 0, sent: 0, dropped: 0, deferred: 0, bounced: 0, onhold: 0 },
    opens: 0, clicks: 0, unique_opened: 0, unique_clicked: 0,
    rates: { delivery_rate: null, bounce_rate: null, open_rate: null, click_rate: null, click_to_open_rate: null },
  }, 'an empty window: zeros, and null rates');
  for (const bad of ['start_date=2026-02-30', 'end_date=tomorrow', 'start_date=20200101']) {
    const b = await api('GET', `/v1/stats/overview?${bad}`);
    t.same([b.status, b.body.code], [400, 'malformed_request'], bad);
  }
  // The mail lists' other parameters mean nothing here: ignored, even repeated (it was a 500).
  const extra = await api('GET', '/v1/stats/overview?start_date=2020-01-01&end_date=2020-01-31&recipient=a&recipient=b&status=3&status=4');
  t.same([extra.status, extra.body.total], [200, 0], 'extra list parameters are ignored');

  // A suppressed recipient is dropped before any attempt: the counts follow.
  const again = await w.send(['gone@example.test']);
  await waitFor(() => mailState(w.ts.svc, again.mailIds[0]).status === 4, { what: 'restricted address dropped' });
  const later = (await api('GET', '/v1/stats/overview')).body;
  t.same([later.total, later.status.dropped, later.rates.delivery_rate], [4, 1, 0.5]);
  t.equal(later.test, 0, 'no test-mode send yet');

  // test_mode: "delivered but marked as test and counted as `test` in reports".
  const trial = await w.send(['ana@example.test', 'bo@example.test'], { test_mode: true });
  await waitFor(() => trial.mailIds.every((id) => mailState(w.ts.svc, id).status === 3), { what: 'test mails sent' });
  const withTest = (await api('GET', '/v1/stats/overview')).body;
  t.same([withTest.total, withTest.test, withTest.status.sent], [6, 2, 4], 'counted as test, and in their status');
  t.equal((await api('GET', '/v1/stats/overview?start_date=2020-01-01&end_date=2020-01-31')).body.test, 0, 'only the window\'s');

  const sendOnly = await w.ts.cli('apikey', 'create', w.slug, '--scopes', 'mail:send', '--json');
  t.same((await api('GET', '/v1/stats/overview', { key: sendOnly.json.api_key })).status, 403, 'needs mail:read');
  const reader = await w.ts.cli('apikey', 'create', w.slug, '--scopes', 'mail:read', '--json');
  t.equal((await api('GET', '/v1/stats/overview', { key: reader.json.api_key })).body.total, 6);
  const other = await w.ts.tenant();
  const theirs = (await api('GET', '/v1/stats/overview', { key: other.key, slug: other.slug })).body;
  t.same([theirs.total, theirs.opens, theirs.clicks, theirs.rates.open_rate], [0, 0, 0, null], 'another instance counts none of it');
});
