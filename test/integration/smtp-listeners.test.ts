import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import selfsigned from 'selfsigned';
import { startTestService, tempDir } from '../helpers/service';
import { spawnService } from '../helpers/process';
import { lineClient } from '../helpers/smtp-client';

const fingerprintOf = (pemFile: string): string => new crypto.X509Certificate(fs.readFileSync(pemFile)).fingerprint256;

async function servedFingerprints(t: Tap, ports: { smtp?: number; smtps?: number }): Promise<[string | null, string | null]> {
  const starttls = await lineClient(t, ports.smtp as number);
  await starttls.cmd('EHLO client.test');
  await starttls.starttls();
  const implicit = await lineClient(t, ports.smtps as number, true);
  const result: [string | null, string | null] = [starttls.peerFingerprint(), implicit.peerFingerprint()];
  starttls.close();
  implicit.close();
  return result;
}
type Tap = Parameters<typeof lineClient>[0];

t.test('a self-signed certificate is generated once in the data dir, served by both listeners and reused after a restart', async (t) => {
  const dataDir = tempDir();
  const env = { ESTAFETA_DATA_DIR: dataDir, ESTAFETA_SMTPS_PORT: '0' };
  const first = await startTestService(t, env);
  const certFile = path.join(dataDir, 'tls', 'smtp-cert.pem');
  const keyFile = path.join(dataDir, 'tls', 'smtp-key.pem');
  const fingerprint = fingerprintOf(certFile);
  t.equal(fs.statSync(keyFile).mode & 0o077, 0, 'the key is readable by its owner only');
  t.same(await servedFingerprints(t, first.svc.ports), [fingerprint, fingerprint]);
  t.match(new crypto.X509Certificate(fs.readFileSync(certFile)).subject, /CN=mta\.estafeta\.test/);
  await first.stop();

  const second = await startTestService(t, env);
  t.equal(fingerprintOf(certFile), fingerprint, 'not generated again');
  t.same(await servedFingerprints(t, second.svc.ports), [fingerprint, fingerprint]);
});

t.test("the operator's certificate is served when ESTAFETA_TLS_CERT and ESTAFETA_TLS_KEY are set, and none is generated", async (t) => {
  const dir = tempDir();
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'operator.test' }], { keySize: 2048, algorithm: 'sha256' });
  fs.writeFileSync(path.join(dir, 'cert.pem'), pems.cert);
  fs.writeFileSync(path.join(dir, 'key.pem'), pems.private);
  const s = await startTestService(t, { ESTAFETA_TLS_CERT: path.join(dir, 'cert.pem'), ESTAFETA_TLS_KEY: path.join(dir, 'key.pem'), ESTAFETA_SMTPS_PORT: '0' });
  const fingerprint = fingerprintOf(path.join(dir, 'cert.pem'));
  t.same(await servedFingerprints(t, s.svc.ports), [fingerprint, fingerprint]);
  t.notOk(fs.existsSync(path.join(s.dataDir, 'tls')), 'nothing generated');
});

t.test('a declared SIZE over 15728640 is refused at MAIL with 552 5.3.4; the limit itself is accepted', async (t) => {
  const s = await startTestService(t);
  const { slug, key } = await s.tenant();
  const c = await lineClient(t, s.svc.ports.smtp as number);
  await c.cmd('EHLO client.test');
  await c.starttls();
  await c.cmd('EHLO client.test');
  t.match(await c.cmd(`AUTH PLAIN ${Buffer.from(`\0${slug}\0${key}`).toString('base64')}`), /^235 /);
  t.match(await c.cmd(`MAIL FROM:<sandbox@${slug}.sandbox.test> SIZE=15728641`), /^552 5\.3\.4 request_too_large /);
  t.match(await c.cmd(`MAIL FROM:<sandbox@${slug}.sandbox.test> SIZE=15728640`), /^250 /);
  t.match(await c.cmd('RSET'), /^250 /);
  t.match(await c.cmd('DATA'), /^503 5\.5\.1 /, "smtp-server's own replies carry an enhanced code too");
  // RFC 5321 §4.1.1.11: DSN is not offered, so its parameters are not honoured: 555, not a
  // silent 250 that would let a client believe NOTIFY=NEVER was taken.
  t.match(await c.cmd(`MAIL FROM:<sandbox@${slug}.sandbox.test> RET=FULL ENVID=x1`), /^555 5\.5\.4 validation_error Parameter RET /);
  t.match(await c.cmd(`MAIL FROM:<sandbox@${slug}.sandbox.test> SIZE=100 BODY=8BITMIME AUTH=<>`), /^250 /, 'the parameters of the extensions EHLO lists');
  t.match(await c.cmd(`RCPT TO:<a@${slug}.sandbox.test> NOTIFY=NEVER`), /^555 5\.5\.4 validation_error Parameter NOTIFY /);
  t.match(await c.cmd(`RCPT TO:<a@${slug}.sandbox.test>`), /^250 /, 'the transaction goes on');
});

t.test('a stop answers idle sessions 421 at once and lets every transaction under way finish with 250', async (t) => {
  const s = await startTestService(t, { ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'true' });
  const { slug, key } = await s.tenant();
  const port = s.svc.ports.smtp as number;
  const session = async (name: string) => {
    const c = await lineClient(t, port);
    await c.cmd(`EHLO ${name}.test`);
    t.match(await c.cmd(`AUTH PLAIN ${Buffer.from(`\0${slug}\0${key}`).toString('base64')}`), /^235 /);
    return c;
  };
  const idle = await session('idle');
  const busy = await session('busy');
  const enveloped = await session('enveloped'); // MAIL and RCPT given, DATA not yet
  for (const c of [busy, enveloped]) {
    t.match(await c.cmd(`MAIL FROM:<sandbox@${slug}.sandbox.test>`), /^250 /);
    t.match(await c.cmd(`RCPT TO:<x@${slug}.sandbox.test>`), /^250 /);
  }
  t.match(await busy.cmd('DATA'), /^354 /);
  busy.write(`From: sandbox@${slug}.sandbox.test\r\nSubject: in flight\r\n`);
  const stopped = s.stop();
  t.match(await idle.read(), /^421 4\.3\.2 /, 'the idle session is told');
  // The final reply and the 421 may arrive in one segment: read until the 421.
  const through421 = async (c: typeof busy, reply: Promise<string>): Promise<string> => {
    const first = await reply;
    return /^421 /m.test(first) ? first : `${first}\n${await c.read()}`;
  };
  t.match(await through421(busy, busy.cmd('\r\nstill here\r\n.')), /^250 2\.0\.0 Ok: queued as \S+\n421 4\.3\.2 /,
    'the message under way is accepted, then the session is told 421 without waiting for its next command');
  // CONTRACT §1 "finish in-flight SMTP transactions": a transaction begins at MAIL (RFC 5321 §3.3).
  t.match(await enveloped.cmd(`RCPT TO:<y@${slug}.sandbox.test>`), /^250 /, 'a transaction begun before the stop takes more recipients');
  t.match(await enveloped.cmd('DATA'), /^354 /);
  t.match(await through421(enveloped, enveloped.cmd(`From: sandbox@${slug}.sandbox.test\r\nSubject: begun before the stop\r\n\r\nbody\r\n.`)),
    /^250 2\.0\.0 Ok: queued as \S+\n421 4\.3\.2 /, 'and its message is accepted, then it is told 421');
  await stopped;
});

t.test('a SIGTERM while an implicit-TLS client is still in its handshake stops the process with exit 0', async (t) => {
  const dataDir = tempDir();
  const env = { ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HOST: '127.0.0.1', ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_SMTPS_PORT: '0', ESTAFETA_MX_PORT: '0', ESTAFETA_HOSTNAME: 'mta.estafeta.test' };
  const p = await spawnService(t, env, ['http', 'smtps']);
  const [host, port] = p.addresses.smtps.split(/:(?=\d+$)/);
  const raw = net.connect(Number(port), host); // TCP only: the TLS handshake never starts
  t.teardown(() => raw.destroy());
  raw.on('error', () => undefined);
  await new Promise<void>((resolve) => raw.once('connect', () => resolve()));
  p.child.kill('SIGTERM');
  // Destroying such a socket mid-handshake crashed the process (SIGSEGV), as smtp-server's own close() does.
  t.same(await p.exited, { code: 0, signal: null }, 'exit 0');
});
