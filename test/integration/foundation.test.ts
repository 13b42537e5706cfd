import t from 'tap';
import { startTestService } from '../helpers/service';

t.test('a new instance lists its sandbox sender through an authenticated GET /v1/senders', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const res = await s.api('GET', '/v1/senders');
  t.equal(res.status, 200);
  t.equal(res.body.data.length, 1);
  t.equal(res.body.data[0].email_address, `sandbox@${slug}.sandbox.test`);
  t.equal(res.body.data[0].domain_is_verified, true);
  t.same(res.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: 1, total_pages: 1 });
});
