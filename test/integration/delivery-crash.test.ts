import t from 'tap';
import { openDb } from '../../src/store/db';
import { spawnService } from '../helpers/process';
import { startSink } from '../helpers/smtp-sink';
import { startDns } from '../helpers/dns-server';
import { queueMail, mailState } from '../helpers/enqueue';
import { runCli, tempDir, waitFor } from '../helpers/service';

t.test('a SIGKILL in the middle of a delivery attempt leads to a delivery after restart', async (t) => {
  const dataDir = tempDir();
  const stuck = await startSink(t, { holdFirst: 1 });
  const healthy = await startSink(t);
  const dns = await startDns(t, { 'example.test': { MX: [{ exchange: 'mx.example.test', priority: 10 }] }, 'mx.example.test': { A: ['127.0.0.1'] } });
  const env = {
    ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0', ESTAFETA_HOSTNAME: 'mta.estafeta.test',
    ESTAFETA_DNS_SERVERS: dns.address, ESTAFETA_RETRY_DELAYS: '3600',
  };
  const inst = await runCli(env, ['instance', 'create', 'crashco', '--json']);
  t.equal(inst.code, 0);
  const db = openDb(dataDir);
  t.teardown(() => db.close());
  const q = await queueMail({ db, config: { dataDir, hostname: 'mta.estafeta.test' } }, { instanceId: inst.json.id, from: 'news@brand.test', to: ['ana@example.test'] });

  const first = await spawnService(t, { ...env, ESTAFETA_DELIVERY_PORT: String(stuck.port) });
  await waitFor(() => stuck.stats.held === 1, { what: 'the attempt to be in DATA' });
  first.child.kill('SIGKILL');
  await first.exited;
  t.equal(mailState({ db }, q.mailIds[0]).status, 2, 'not final: the kill came before any outcome');

  await spawnService(t, { ...env, ESTAFETA_DELIVERY_PORT: String(healthy.port) });
  await waitFor(() => mailState({ db }, q.mailIds[0]).status === 3, { what: 'delivered after restart', timeoutMs: 15_000 });
  t.equal(healthy.received.length, 1, 'delivered once by the restarted service');
  t.same(healthy.received[0].to, ['ana@example.test']);
});
