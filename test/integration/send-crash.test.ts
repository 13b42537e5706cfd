import t from 'tap';
import net from 'node:net';
import { spawnService } from '../helpers/process';
import { runCli, tempDir, type TapLike } from '../helpers/service';
import { startDns } from '../helpers/dns-server';
import { publishedZone } from './domains-fixture';
import { filesOf, spooledBytes, spoolFiles, spoolRefsIn } from '../helpers/spool-files';

/**
 * A loopback port whose every connection is reset: delivery attempts fail at once and the mails
 * stay deferred. Held open for the test, so no other process can take the port meanwhile.
 */
async function resettingPort(t: TapLike): Promise<number> {
  const server = net.createServer((socket) => socket.resetAndDestroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as net.AddressInfo).port;
}

t.test('SIGKILL right after the last 200: every acknowledged mail survives with its bytes, and no orphan file is left', async (t) => {
  const dns = await startDns(t, {});
  const dataDir = tempDir();
  const env = {
    ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0', ESTAFETA_HOSTNAME: 'mta.estafeta.test',
    ESTAFETA_DNS_SERVERS: dns.address, ESTAFETA_DELIVERY_PORT: String(await resettingPort(t)), ESTAFETA_RETRY_DELAYS: '3600',
  };
  const cli = async (...args: string[]) => {
    const r = await runCli(env, [...args, '--json']);
    if (r.code !== 0) throw new Error(`${args.join(' ')}: ${r.stdout} ${r.stderr}`);
    return r.json;
  };
  await cli('instance', 'create', 'crash');
  const key = (await cli('apikey', 'create', 'crash')).api_key as string;
  const domain = await cli('domain', 'add', 'crash', 'brand.example');
  const dkim = await cli('domain', 'dkim', 'crash', 'brand.example');
  dns.setZone({ ...publishedZone(domain.dns_records, dkim), 'dest.example': { MX: [{ exchange: 'mx.dest.example', priority: 10 }] }, 'mx.dest.example': { A: ['127.0.0.1'] } });
  t.equal((await cli('domain', 'validate', 'crash', 'brand.example')).mx_status, 'verified');
  await cli('sender', 'add', 'crash', 'news@brand.example');

  const first = await spawnService(t, env);
  const base = `http://${first.addresses.http}`;
  const headers = { Authorization: `Bearer ${key}`, 'X-Instance-Slug': 'crash', 'Content-Type': 'application/json' };
  const acked: string[] = [];
  let sent = 0;
  let killed = false;
  const stopAt = 300;
  const worker = async (): Promise<void> => {
    while (!killed && sent < 2000) {
      const n = sent++;
      const body = JSON.stringify({ sender_email: 'news@brand.example', to: [{ email: `r${n}@dest.example` }], subject: `crash ${n}`, html: `<p>${'x'.repeat(2000)}</p>` });
      try {
        const res = await fetch(`${base}/v1/mails/send`, { method: 'POST', headers, body });
        if (res.status !== 200) continue;
        const { message_id } = (await res.json()) as { message_id: string };
        acked.push(message_id);
        if (acked.length >= stopAt && !killed) {
          killed = true;
          first.child.kill('SIGKILL'); // right after this 200, with other sends still in flight
        }
      } catch {
        // the process died under this request: it was never acknowledged
      }
    }
  };
  await Promise.all(Array.from({ length: 48 }, worker));
  t.same(await first.exited, { code: null, signal: 'SIGKILL' });
  t.ok(acked.length >= stopAt, `${acked.length} sends acknowledged before the kill`);

  const second = await spawnService(t, env);
  const api = async (p: string) => (await (await fetch(`http://${second.addresses.http}${p}`, { headers })).json()) as { data: { msg_id: string; status: number; subject: string }[] };
  const refs = spoolRefsIn(dataDir);
  let missing = 0;
  for (const msgId of acked) {
    const rows = (await api(`/v1/mails?msg_id=${msgId}`)).data;
    const bytes = (await spooledBytes(dataDir, refs.get(msgId)))?.toString('latin1') ?? '';
    if (rows.length !== 1 || ![2, 5].includes(rows[0].status) || !bytes.includes(`Message-ID: <${msgId}@mta.estafeta.test>`) || !bytes.includes(`Subject: ${rows[0].subject}`)) missing++;
  }
  t.equal(missing, 0, 'every acknowledged mail has its row and its complete bytes in the spool');
  const files = spoolFiles(dataDir);
  t.equal(files.filter((f) => f.startsWith('.tmp-')).length, 0, 'no temporary file survives the restart');
  const live = filesOf(spoolRefsIn(dataDir, 'SELECT msg_id, spool_file FROM messages WHERE pending > 0').values());
  t.same(files.filter((f) => !live.has(f)), [], 'every spool file holds a message still to deliver: no orphan segment');
  t.equal(second.lines.filter((l) => Number(l.level) >= 50).length, 0, 'no start-up error');
});
