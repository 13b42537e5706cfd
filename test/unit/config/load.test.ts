import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, envKeys } from '../../../src/config/load';
import { projectRoot } from '../../../src/lib/paths';
import { loadTlsCredentials } from '../../../src/smtp/tls';
import { tempDir } from '../../helpers/service';

t.test('defaults come from config/default.json and the contract', async (t) => {
  const c = loadConfig({}, '/srv/x');
  t.equal(c.dataDir, '/srv/x/spool');
  t.equal(c.host, '127.0.0.1');
  t.equal(c.httpPort, 8080);
  t.equal(c.smtpPort, 2525);
  t.equal(c.smtpsPort, null);
  t.equal(c.mxPort, 2526);
  t.equal(c.deliveryPort, 25);
  t.equal(c.relay, null);
  t.same(c.retryDelays, [60, 300, 900, 1800, 3600, 7200, 14400]);
  t.equal(c.maxQueueAge, 432000);
  t.equal(c.smtpAllowInsecureAuth, false);
  t.equal(c.logLevel, 'info');
  t.equal(c.publicUrl, 'http://127.0.0.1:8080');
  t.ok(c.hostname.length > 0, 'the OS host name by default');
});

t.test('precedence: environment > ESTAFETA_CONFIG file > default.json', async (t) => {
  const dir = tempDir();
  const file = path.join(dir, 'estafeta.json');
  fs.writeFileSync(file, JSON.stringify({ httpPort: 9000, smtpPort: 9025, retryDelays: [5, 10], hostname: 'file.example' }));
  const c = loadConfig({ ESTAFETA_CONFIG: file, ESTAFETA_HTTP_PORT: '9100', ESTAFETA_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.1', ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'true' }, dir);
  t.equal(c.httpPort, 9100, 'env wins over the file');
  t.equal(c.smtpPort, 9025, 'file wins over the default');
  t.same(c.retryDelays, [5, 10]);
  t.equal(c.hostname, 'file.example');
  t.same(c.dnsServers, ['127.0.0.1:5353', '10.0.0.1']);
  t.equal(c.smtpAllowInsecureAuth, true);
  t.equal(c.publicUrl, 'http://127.0.0.1:9100');
});

t.test('invalid values and unknown file keys are refused', async (t) => {
  t.throws(() => loadConfig({ ESTAFETA_HTTP_PORT: 'x' }), /ESTAFETA_HTTP_PORT/);
  t.throws(() => loadConfig({ ESTAFETA_LOG_LEVEL: 'loud' }), /ESTAFETA_LOG_LEVEL \(logLevel\)/, 'named by its variable and its file key');
  t.throws(() => loadConfig({ ESTAFETA_HTTP_PORT: '70000' }), /ESTAFETA_HTTP_PORT/);
  t.throws(() => loadConfig({ ESTAFETA_HTTP_PORT: '4000', ESTAFETA_MX_PORT: '4000' }), /ESTAFETA_MX_PORT: port 4000 is also ESTAFETA_HTTP_PORT/, 'two listeners on one port');
  t.throws(() => loadConfig({ ESTAFETA_SMTPS_PORT: '2525' }), /ESTAFETA_SMTPS_PORT: port 2525 is also ESTAFETA_SMTP_PORT/, 'against a default too');
  t.doesNotThrow(() => loadConfig({ ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0' }), 'port 0 (any free port) may repeat');
  // Node's timers hold at most 2^31-1 ms: a longer bound was silently ~1 ms.
  t.throws(() => loadConfig({ ESTAFETA_SHUTDOWN_TIMEOUT: '2147484' }), /ESTAFETA_SHUTDOWN_TIMEOUT/);
  t.equal(loadConfig({ ESTAFETA_SHUTDOWN_TIMEOUT: '2147483' }).shutdownTimeout, 2147483);
  t.equal(loadConfig({ ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'OFF' }).smtpAllowInsecureAuth, false, '`off` turns a boolean off, as any optional key');
  t.equal(loadConfig({ ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'on' }).smtpAllowInsecureAuth, true);
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'c.json'), JSON.stringify({ httpPrt: 1 }));
  t.throws(() => loadConfig({ ESTAFETA_CONFIG: 'c.json' }, dir), /invalid configuration at httpPrt: unknown key/, 'the unknown key is named');
});

t.test('DNS servers and the TLS pair are checked at load, before any listener starts', async (t) => {
  for (const ok of ['127.0.0.1', '127.0.0.1:5353', '::1', '[::1]:5353', '2001:db8::1, 10.0.0.1']) {
    t.doesNotThrow(() => loadConfig({ ESTAFETA_DNS_SERVERS: ok }), ok);
  }
  for (const bad of ['foo', 'dns.example:53', '127.0.0.1:0', '127.0.0.1:99999', '[127.0.0.1]:53', '::1:53x']) {
    t.throws(() => loadConfig({ ESTAFETA_DNS_SERVERS: bad }), /ESTAFETA_DNS_SERVERS/, bad);
  }
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'cert.pem'), 'x');
  t.throws(() => loadConfig({ ESTAFETA_TLS_CERT: 'cert.pem' }, dir), /set together/);
  t.throws(() => loadConfig({ ESTAFETA_TLS_CERT: 'cert.pem', ESTAFETA_TLS_KEY: 'missing.pem' }, dir), /ESTAFETA_TLS_KEY: cannot read missing\.pem/);
  fs.writeFileSync(path.join(dir, 'key.pem'), 'x');
  t.throws(() => loadConfig({ ESTAFETA_TLS_CERT: 'cert.pem', ESTAFETA_TLS_KEY: 'key.pem' }, dir), /ESTAFETA_TLS_CERT \/ ESTAFETA_TLS_KEY: not a usable/, 'files that are not PEM');
  // A real pair, as the service generates one for itself.
  const pair = await loadTlsCredentials({ dataDir: dir, hostname: 'mta.example.test', tlsCert: null, tlsKey: null });
  fs.writeFileSync(path.join(dir, 'cert.pem'), pair.cert);
  fs.writeFileSync(path.join(dir, 'key.pem'), pair.key);
  t.equal(loadConfig({ ESTAFETA_TLS_CERT: 'cert.pem', ESTAFETA_TLS_KEY: 'key.pem' }, dir).tlsKey, path.join(dir, 'key.pem'), 'resolved like the data dir');
  const other = await loadTlsCredentials({ dataDir: path.join(dir, 'other'), hostname: 'x.example.test', tlsCert: null, tlsKey: null });
  fs.writeFileSync(path.join(dir, 'other-key.pem'), other.key);
  t.throws(() => loadConfig({ ESTAFETA_TLS_CERT: 'cert.pem', ESTAFETA_TLS_KEY: 'other-key.pem' }, dir), /not a usable certificate and key/, 'a key that does not match');
});

t.test('URLs the service builds on are checked at load; `off` turns any optional key off', async (t) => {
  for (const bad of ['notaurl', 'ftp://host.example', 'http://', 'https://host.example/?q=1']) {
    t.throws(() => loadConfig({ ESTAFETA_PUBLIC_URL: bad }), /ESTAFETA_PUBLIC_URL/, bad);
  }
  t.equal(loadConfig({ ESTAFETA_PUBLIC_URL: 'https://mail.example.com/estafeta/' }).publicUrl, 'https://mail.example.com/estafeta');
  for (const bad of ['bad host!', 'a..b', '-mail.example', 'mail_x.example', `${'a'.repeat(64)}.example`]) {
    t.throws(() => loadConfig({ ESTAFETA_HOSTNAME: bad }), /ESTAFETA_HOSTNAME \(hostname\): .* is not a host name/, bad);
  }
  const hostDir = tempDir();
  fs.writeFileSync(path.join(hostDir, 'h.json'), JSON.stringify({ hostname: '' }));
  t.throws(() => loadConfig({ ESTAFETA_CONFIG: 'h.json' }, hostDir), /ESTAFETA_HOSTNAME/, 'an empty name in the file');
  t.equal(loadConfig({ ESTAFETA_HOSTNAME: 'MX1.Example.Test' }).hostname, 'mx1.example.test');
  t.equal(loadConfig({ ESTAFETA_HOSTNAME: 'localhost' }).hostname, 'localhost', 'one label is a host name');
  t.ok(loadConfig({ ESTAFETA_HOSTNAME: '' }).hostname.length > 0, 'empty in the environment: off, the OS host name');
  for (const bad of ['smtp://', 'smtp://h:notaport', 'http://relay.example:25', 'relay.example:25']) {
    t.throws(() => loadConfig({ ESTAFETA_RELAY: bad }), /ESTAFETA_RELAY/, bad);
  }
  t.equal(loadConfig({ ESTAFETA_RELAY: 'smtp://u:p@relay.example:2525' }).relay, 'smtp://u:p@relay.example:2525');
  t.same(loadConfig({ ESTAFETA_DNS_SERVERS: 'off' }).dnsServers, [], 'a list');
  t.equal(loadConfig({ ESTAFETA_SMTPS_PORT: 'OFF' }).smtpsPort, null, 'any case');
  t.equal(loadConfig({ ESTAFETA_RELAY: 'Off' }).relay, null);
  t.throws(() => loadConfig({ ESTAFETA_HOST: '' }), /ESTAFETA_HOST \(host\): cannot be empty or off/, 'a required key has no off');
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'list.json'), '[]');
  t.throws(() => loadConfig({ ESTAFETA_CONFIG: 'list.json' }, dir), /must be a JSON object/);
});

t.test('every environment key is documented in the README', async (t) => {
  const readme = fs.readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
  for (const name of [...Object.keys(envKeys), 'ESTAFETA_CONFIG']) t.match(readme, name, name);
});
