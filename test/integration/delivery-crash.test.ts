import t from 'tap';
import { openDb } from '../../src/store/db';
import { spawnService } from '../helpers/process';
import { startSink } from '../helpers/smtp-sink';
import { startDns } from '../helpers/dns-server';
import { baseZone, mailState, sender, verifyBrand } from '../helpers/delivery-world';
import { runCli, tempDir, waitFor } from '../helpers/service';

t.test('a SIGKILL in the middle of a delivery attempt leads to a delivery after restart', async (t) => {
  const dataDir = tempDir();
  const stuck = await startSink(t, { holdFirst: 1 });
  const healthy = await startSink(t);
  const zone = baseZone();
  const dns = await startDns(t, zone);
  const env = {
    ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HOST: '127.0.0.1', ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0',
    ESTAFETA_HOSTNAME: 'mta.estafeta.test', ESTAFETA_DNS_SERVERS: dns.address, ESTAFETA_RETRY_DELAYS: '3600',
  };
  const cli = (...args: string[]) => runCli(env, args);
  const slug = 'crashco';
  t.equal((await cli('instance', 'create', slug, '--json')).code, 0);
  const key = (await cli('apikey', 'create', slug, '--json')).json.api_key as string;

  const first = await spawnService(t, { ...env, ESTAFETA_DELIVERY_PORT: String(stuck.port) });
  const base = `http://${first.addresses.http}`;
  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(base + path, {
      method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { Authorization: `Bearer ${key}`, 'X-Instance-Slug': slug, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    });
    return { status: res.status, body: await res.json() };
  };
  await verifyBrand(api, cli, slug, zone, dns);
  const q = await sender(api)(['ana@example.test']);
  await waitFor(() => stuck.stats.held === 1, { what: 'the attempt to be in DATA' });
  first.child.kill('SIGKILL');
  await first.exited;
  const db = openDb(dataDir);
  t.teardown(() => db.close());
  t.equal(mailState({ db }, q.mailIds[0]).status, 2, 'not final: the kill came before any outcome');

  await spawnService(t, { ...env, ESTAFETA_DELIVERY_PORT: String(healthy.port) });
  await waitFor(() => mailState({ db }, q.mailIds[0]).status === 3, { what: 'delivered after restart', timeoutMs: 15_000 });
  t.equal(healthy.received.length, 1, 'delivered once by the restarted service');
  t.same(healthy.received[0].to, ['ana@example.test']);
});

t.test('a retry due before the queue age that comes late (the service was down) is still made, not bounced untried', async (t) => {
  const dataDir = tempDir();
  const sink = await startSink(t, { failFirst: 1 });
  const zone = baseZone();
  const dns = await startDns(t, zone);
  const env = {
    ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HOST: '127.0.0.1', ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0',
    ESTAFETA_HOSTNAME: 'mta.estafeta.test', ESTAFETA_DNS_SERVERS: dns.address, ESTAFETA_DELIVERY_PORT: String(sink.port),
    ESTAFETA_RETRY_DELAYS: '2', ESTAFETA_MAX_QUEUE_AGE: '6',
  };
  const cli = (...args: string[]) => runCli(env, args);
  const slug = 'lateco';
  t.equal((await cli('instance', 'create', slug, '--json')).code, 0);
  const key = (await cli('apikey', 'create', slug, '--json')).json.api_key as string;
  const first = await spawnService(t, env);
  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`http://${first.addresses.http}${path}`, {
      method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { Authorization: `Bearer ${key}`, 'X-Instance-Slug': slug, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    });
    return { status: res.status, body: await res.json() };
  };
  await verifyBrand(api, cli, slug, zone, dns);
  const q = await sender(api)(['late@example.test']);
  await waitFor(async () => (await api('GET', `/v1/mails/${q.mailIds[0]}`)).body.status === 5, { what: 'the first attempt deferred' });
  first.child.kill('SIGKILL');
  await first.exited;
  const db = openDb(dataDir);
  t.teardown(() => db.close());
  const receivedAt = (db.prepare('SELECT received_at FROM mails WHERE mail_id = ?').get(q.mailIds[0]) as { received_at: number }).received_at;
  const retryAt = (db.prepare('SELECT next_attempt_at FROM mails WHERE mail_id = ?').get(q.mailIds[0]) as { next_attempt_at: number }).next_attempt_at;
  t.ok(retryAt < receivedAt + 6000, 'the retry was due before the queue age (the case under test)');
  // Down past the age: the retry (due 2 s after the first attempt) is overdue when the service is back.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, receivedAt + 6500 - Date.now())));
  await spawnService(t, env);
  await waitFor(() => mailState({ db }, q.mailIds[0]).status !== 5, { what: 'an outcome after restart', timeoutMs: 15_000 });
  t.equal(mailState({ db }, q.mailIds[0]).status, 3, 'the overdue retry was made, and delivered');
  t.equal(sink.received.length, 1);
});
