import t from 'tap';
import { startTestService } from '../helpers/service';

// Acceptance-style checks of the letter of the spec and CONTRACT found in the conformance review.
t.test('conformance details found in review', async (t) => {
  const s = await startTestService(t);
  await s.tenant();

  t.test('a 400 malformed_request carries no errors[] and names the parameter in its detail', async (t) => {
    for (const path of ['/v1/mail-templates?page=x', '/v1/fields?is_active=maybe', '/v1/forms?kind=x&kind=y', '/v1/consent-events?term_id=x']) {
      const res = await s.api('GET', path);
      t.equal(res.status, 400, path);
      t.equal(res.body.code, 'malformed_request', path);
      t.notOk('errors' in res.body, `${path} has no errors[]`);
      t.match(res.body.detail, /page|is_active|kind|term_id/, path);
    }
  });

  t.test('a 422 still carries errors[] with params only when not empty', async (t) => {
    const res = await s.api('POST', '/v1/consent-events', { body: { term_id: 1, rules: [] } });
    t.equal(res.status, 422);
    t.ok(Array.isArray(res.body.errors));
    const missing = res.body.errors.find((e: { pointer: string }) => e.pointer === '/method');
    t.same(Object.keys(missing).sort(), ['code', 'message', 'pointer']);
  });

  t.test('a CLI group without its verb fails with one JSON object naming the problem', async (t) => {
    const r = await s.cli('template', '--json');
    t.not(r.code, 0);
    t.same(Object.keys(r.json).sort(), ['code', 'detail']);
    t.equal(r.json.code, 'validation_error');
    t.notMatch(r.json.detail, /outputHelp/);
  });

  t.test('the Bearer scheme is matched case-insensitively, as RFC 9110 says of auth schemes', async (t) => {
    const { key } = await s.tenant();
    for (const scheme of ['bearer', 'BEARER', 'Bearer ']) {
      const res = await s.api('GET', '/v1/fields', { headers: { Authorization: `${scheme} ${key}` } });
      t.equal(res.status, 200, JSON.stringify(scheme));
    }
    const wrong = await s.api('GET', '/v1/fields', { headers: { Authorization: `Basic ${key}` } });
    t.equal(wrong.status, 401);
  });
});
