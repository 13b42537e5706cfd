import t from 'tap';
import { spawnService } from '../helpers/process';
import { runCli, tempDir, waitFor } from '../helpers/service';

t.test('the service process: ready lines, /healthz, graceful SIGTERM, data kept across restarts', async (t) => {
  const dataDir = tempDir();
  const env = { ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0', ESTAFETA_HOSTNAME: 'mta.estafeta.test' };
  const created = await runCli(env, ['instance', 'create', 'keep', '--json']);
  t.equal(created.code, 0);
  const key = (await runCli(env, ['apikey', 'create', 'keep', '--json'])).json.api_key as string;

  // /healthz is 200 once EVERY listener is up (CONTRACT §1): wait for all three ready lines.
  const first = await spawnService(t, env, ['http', 'smtp', 'mx']);
  t.match(first.addresses.http, /^127\.0\.0\.1:\d+$/);
  const readyLine = first.lines.find((l) => l.event === 'listener.ready' && l.listener === 'http');
  t.match(readyLine?.msg, /http listening on 127\.0\.0\.1:\d+/);
  const base = `http://${first.addresses.http}`;
  // The last ready line and the ready flag are a few ticks apart: a client polls /healthz.
  await waitFor(async () => (await fetch(`${base}/healthz`)).status === 200, { what: '/healthz 200' }).catch(() => undefined);
  const health = await fetch(`${base}/healthz`);
  t.equal(health.status, 200);
  t.same(await health.json(), { status: 'ok' });

  first.child.kill('SIGTERM');
  t.same(await first.exited, { code: 0, signal: null }, 'SIGTERM exits 0');

  const second = await spawnService(t, env, ['http', 'smtp', 'mx']);
  const res = await fetch(`http://${second.addresses.http}/v1/senders`, { headers: { Authorization: `Bearer ${key}`, 'X-Instance-Slug': 'keep' } });
  t.equal(res.status, 200, 'the key created before the restart still works');
  const body = (await res.json()) as { data: { email_address: string }[] };
  t.same(body.data.map((s) => s.email_address), ['sandbox@keep.sandbox.test']);
  second.child.kill('SIGINT');
  t.equal((await second.exited).code, 0, 'SIGINT exits 0');
});

t.test('an invalid configuration stops the start with the failing key', async (t) => {
  const p = spawnService(t, { ESTAFETA_DATA_DIR: tempDir(), ESTAFETA_HTTP_PORT: 'eighty' });
  await t.rejects(p, /ESTAFETA_HTTP_PORT/);
});
