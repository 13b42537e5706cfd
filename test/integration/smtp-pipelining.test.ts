// RFC 2920 pipelining, seen from a client in another process (the service spawned as
// `node dist/src/main.js`): the replies to a pipelined group leave the service in one write, so
// they arrive together; a STARTTLS pipelined behind another command still gets its 220 before
// the socket changes hands, and the session goes on over TLS.
import net from 'node:net';
import tls from 'node:tls';
import t from 'tap';
import { spawnService } from '../helpers/process';
import { runCli, tempDir, waitFor } from '../helpers/service';

interface Raw { socket: net.Socket; chunks: string[]; text: () => string; send: (s: string) => void }

async function connect(address: string): Promise<Raw> {
  const [host, port] = address.split(/:(?=\d+$)/);
  const socket = net.connect(Number(port), host);
  const chunks: string[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d.toString('latin1')));
  const raw = { socket, chunks, text: () => chunks.join(''), send: (s: string) => void socket.write(s) };
  await waitFor(() => raw.text().startsWith('220 '), { what: 'the greeting' });
  return raw;
}

t.test('pipelined replies arrive in one write; STARTTLS behind NOOP upgrades', async (t) => {
  const env = { ESTAFETA_DATA_DIR: tempDir(), ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0', ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'true' };
  t.equal((await runCli(env, ['instance', 'create', 'pipes', '--json'])).code, 0);
  const key = (await runCli(env, ['apikey', 'create', 'pipes', '--json'])).json.api_key as string;
  const svc = await spawnService(t, env, ['http', 'smtp']);

  const c = await connect(svc.addresses.smtp);
  t.teardown(() => c.socket.destroy());
  c.send('EHLO client.test\r\n');
  await waitFor(() => /250 [^\r\n]*\r\n$/.test(c.text()), { what: 'EHLO' });
  c.send(`AUTH PLAIN ${Buffer.from(`\0pipes\0${key}`).toString('base64')}\r\n`);
  await waitFor(() => c.text().includes('235 '), { what: 'AUTH' });
  for (let round = 0; round < 3; round++) {
    c.chunks.length = 0;
    c.send('MAIL FROM:<sandbox@pipes.sandbox.test>\r\nRCPT TO:<a@pipes.sandbox.test>\r\nDATA\r\n');
    await waitFor(() => c.text().includes('354 '), { what: 'the 354' });
    t.match(c.chunks[0], /^250 [^\r\n]*\r\n250 [^\r\n]*\r\n354 [^\r\n]*\r\n$/, `round ${round}: MAIL, RCPT and DATA answered in one segment`);
    c.chunks.length = 0;
    c.send(`From: <sandbox@pipes.sandbox.test>\r\nTo: <a@pipes.sandbox.test>\r\nSubject: pipelined ${round}\r\n\r\nhello\r\n.\r\n`);
    await waitFor(() => /\r\n$/.test(c.text()), { what: 'the final reply' });
    t.match(c.text(), /^250 2\.0\.0 Ok: queued as \S+\r\n$/, `round ${round}: queued`);
  }

  const u = await connect(svc.addresses.smtp);
  t.teardown(() => u.socket.destroy());
  u.send('EHLO client.test\r\nNOOP\r\nSTARTTLS\r\n');
  await waitFor(() => /\r\n220 [^\r\n]*\r\n$/.test(u.text()), { what: 'the 220 to STARTTLS' });
  t.match(u.text(), /250 [^\r\n]*\r\n250 [^\r\n]*\r\n220 /, 'EHLO, NOOP, then 220, in order');
  const secure = tls.connect({ socket: u.socket, rejectUnauthorized: false });
  t.teardown(() => secure.destroy());
  await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
  let over = '';
  secure.on('data', (d: Buffer) => (over += d.toString('latin1')));
  secure.write('EHLO client.test\r\n');
  await waitFor(() => /250 [^\r\n]*\r\n$/.test(over), { what: 'EHLO over TLS' });
  t.match(over, /^250-/, 'the session goes on over TLS');
  t.match(over, /AUTH PLAIN LOGIN/, 'and offers AUTH there');
});
