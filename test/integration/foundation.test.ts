import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService, tempDir } from '../helpers/service';
import { openDb } from '../../src/store/db';

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

t.test('the data dir keeps its secrets to its owner: the store (DKIM keys), the spool, the TLS key, tracking.key', async (t) => {
  const dataDir = path.join(tempDir(), 'data'); // created by the service itself
  const s = await startTestService(t, { ESTAFETA_DATA_DIR: dataDir });
  const { slug } = await s.tenant();
  t.equal((await s.cli('domain', 'add', slug, 'mail.example.com', '--json')).code, 0, 'a DKIM key pair in the store');
  const sent = await s.api('POST', '/v1/mails/send', { body: { sender_email: `sandbox@${slug}.sandbox.test`, to: [{ email: `a@${slug}.sandbox.test` }], subject: 's', html: '<p>h</p>' } });
  t.equal(sent.status, 200);
  const mode = (f: string): string => (fs.statSync(path.join(dataDir, f)).mode & 0o777).toString(8);
  t.equal(mode('.'), '700', 'the data dir it creates');
  for (const f of ['estafeta.db', 'estafeta.db-wal', 'estafeta.db-shm', 'tracking.key', 'tls/smtp-key.pem']) t.equal(mode(f), '600', f);
  t.equal(mode('messages'), '700');
  const segments = fs.readdirSync(path.join(dataDir, 'messages'));
  t.ok(segments.length > 0);
  for (const f of segments) t.equal(mode(`messages/${f}`), '600', f);
});

t.test('an older data dir with a readable store is narrowed at open', async (t) => {
  const dataDir = tempDir();
  openDb(dataDir).close();
  fs.chmodSync(path.join(dataDir, 'estafeta.db'), 0o644);
  fs.chmodSync(dataDir, 0o755); // as ./spool comes with a clone (its .gitkeep)
  openDb(dataDir).close();
  t.equal((fs.statSync(path.join(dataDir, 'estafeta.db')).mode & 0o777).toString(8), '600');
  t.equal((fs.statSync(dataDir).mode & 0o777).toString(8), '700', 'the data dir itself');
});
