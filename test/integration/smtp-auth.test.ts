import t from 'tap';
import { startTestService } from '../helpers/service';
import { lineClient, smtpConnect } from '../helpers/smtp-client';

t.test('EHLO offers the contract extensions, and AUTH only once STARTTLS has run', async (t) => {
  const s = await startTestService(t);
  const port = s.svc.ports.smtp as number;
  const c = await lineClient(t, port);
  t.match(c.greeting, /^220 mta\.estafeta\.test ESMTP/);
  const plain = (await c.cmd('EHLO client.test')).split('\n');
  for (const ext of ['PIPELINING', '8BITMIME', 'SMTPUTF8', 'SIZE 15728640', 'STARTTLS']) t.ok(plain.includes(`250-${ext}`) || plain.includes(`250 ${ext}`), ext);
  t.notOk(plain.some((l) => /AUTH/.test(l)), 'no AUTH in clear text');
  t.match(await c.cmd('AUTH PLAIN'), /^5\d\d /, 'AUTH refused in clear text');
  await c.starttls();
  const secure = (await c.cmd('EHLO client.test')).split('\n');
  t.ok(secure.some((l) => /^250[- ]AUTH PLAIN LOGIN$/.test(l)), 'AUTH PLAIN LOGIN after STARTTLS');
  t.notOk(secure.some((l) => /STARTTLS/.test(l)));
  t.ok(secure.some((l) => /SIZE 15728640/.test(l)));
});

t.test('STARTTLS then AUTH with the slug and an API key succeeds, with PLAIN and LOGIN', async (t) => {
  const s = await startTestService(t);
  const { slug, key } = await s.tenant();
  const sendOnly = await s.cli('apikey', 'create', slug, '--scopes', 'mail:send', '--json');
  for (const method of ['PLAIN', 'LOGIN']) {
    for (const pass of [key, sendOnly.json.api_key as string]) {
      const c = await smtpConnect(t, s.svc.ports.smtp as number);
      t.equal(c.conn.secure, true, 'upgraded with STARTTLS');
      const err = await new Promise<Error | null>((resolve) => c.conn.login({ user: slug, pass, method }, (e) => resolve(e ?? null)));
      t.equal(err, null, `${method} login`);
      t.equal(c.conn.authenticated, true);
      c.close();
    }
  }
});

t.test('AUTH PLAIN: an authorization identity other than the slug is refused; the slug there alone is the user', async (t) => {
  const s = await startTestService(t, { ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'true' });
  const { slug, key } = await s.tenant();
  const other = await s.tenant();
  const plain = async (authzid: string, authcid: string): Promise<string> => {
    const c = await lineClient(t, s.svc.ports.smtp as number);
    await c.cmd('EHLO client.test');
    const reply = await c.cmd(`AUTH PLAIN ${Buffer.from(`${authzid}\0${authcid}\0${key}`).toString('base64')}`);
    c.close();
    return reply;
  };
  t.match(await plain(other.slug, slug), /^535 5\.7\.8 /, 'acting as another instance (RFC 4616)');
  t.match(await plain(slug, slug), /^235 /, 'the same identity twice');
  t.match(await plain(slug, ''), /^235 /, 'the user in the authorization field only, as some clients send it');
});

t.test('AUTH before STARTTLS is refused unless ESTAFETA_SMTP_ALLOW_INSECURE_AUTH=true', async (t) => {
  const strict = await startTestService(t);
  const a = await strict.tenant();
  const c = await smtpConnect(t, strict.svc.ports.smtp as number, { ignoreTLS: true });
  t.equal(c.conn.secure, false);
  t.equal(c.conn.allowsAuth, false, 'AUTH not advertised');
  const err = await c.login(a.slug, a.key);
  t.ok(err, 'login refused');
  t.equal(c.conn.authenticated, false);

  const lax = await startTestService(t, { ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'true' });
  const b = await lax.tenant();
  const d = await smtpConnect(t, lax.svc.ports.smtp as number, { ignoreTLS: true });
  t.equal(d.conn.secure, false);
  t.equal(d.conn.allowsAuth, true, 'AUTH advertised in clear text');
  t.equal(await d.login(b.slug, b.key), null);
});

t.test('every credential failure is 535 5.7.8', async (t) => {
  const s = await startTestService(t);
  const a = await s.tenant();
  const b = await s.tenant();
  const readOnly = await s.cli('apikey', 'create', a.slug, '--scopes', 'mail:read', '--json');
  const fenced = await s.cli('apikey', 'create', a.slug, '--ip-allow', '10.0.0.0/8', '--json');
  const revoked = await s.cli('apikey', 'create', a.slug, '--json');
  t.equal((await s.cli('apikey', 'revoke', a.slug, revoked.json.key_id, '--json')).code, 0);
  const [prefix, keyId] = a.key.split('.');
  const cases: Record<string, [string, string]> = {
    'a wrong key': [a.slug, `${prefix}.${keyId}.wrongtoken`],
    'a malformed key': [a.slug, 'not-a-key'],
    'an unknown slug': ['no-such-instance', a.key],
    'a key of another instance': [a.slug, b.key],
    'a revoked key': [a.slug, revoked.json.api_key],
    'a key without mail:send': [a.slug, readOnly.json.api_key],
    'a key whose IP allow list excludes 127.0.0.1': [a.slug, fenced.json.api_key],
  };
  for (const [name, [user, pass]] of Object.entries(cases)) {
    const c = await smtpConnect(t, s.svc.ports.smtp as number);
    const err = await c.login(user, pass);
    t.equal(err?.responseCode, 535, name);
    t.match(err?.response, /^535 5\.7\.8 (unauthorized|forbidden|ip_not_allowed) /, name);
    c.close();
  }

  // The instance's own allow list and its activation apply to every key, read at once.
  t.equal((await s.cli('instance', 'limits', b.slug, '--ip-allow', '192.0.2.0/24', '--json')).code, 0);
  const fencedInstance = await smtpConnect(t, s.svc.ports.smtp as number);
  t.match((await fencedInstance.login(b.slug, b.key))?.response, /^535 5\.7\.8 ip_not_allowed /, 'instance allow list');
  t.equal((await s.cli('instance', 'disable', a.slug, '--json')).code, 0);
  const disabled = await smtpConnect(t, s.svc.ports.smtp as number);
  t.match((await disabled.login(a.slug, a.key))?.response, /^535 5\.7\.8 forbidden /, 'disabled instance');
  t.equal((await s.cli('instance', 'enable', a.slug, '--json')).code, 0);
  const enabled = await smtpConnect(t, s.svc.ports.smtp as number);
  t.equal(await enabled.login(a.slug, a.key), null, 'enabled again');
});

t.test('MAIL before AUTH is 530 5.7.0, over TLS and in clear text', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const from = `sandbox@${slug}.sandbox.test`;
  const secure = await smtpConnect(t, s.svc.ports.smtp as number);
  const r1 = await secure.send(from, [`x@${slug}.sandbox.test`], 'Subject: hi\r\n\r\nhello\r\n');
  t.equal(r1.err?.responseCode, 530);
  t.match(r1.err?.response, /^530 5\.7\.0 unauthorized /);
  const clear = await smtpConnect(t, s.svc.ports.smtp as number, { ignoreTLS: true });
  const r2 = await clear.send(from, [`x@${slug}.sandbox.test`], 'Subject: hi\r\n\r\nhello\r\n');
  t.equal(r2.err?.responseCode, 530);
  t.match(r2.err?.response, /^530 5\.7\.0 unauthorized /);
});

t.test('implicit TLS listener when ESTAFETA_SMTPS_PORT is set', async (t) => {
  const off = await startTestService(t);
  t.equal(off.svc.ports.smtps, undefined, 'off by default');
  const s = await startTestService(t, { ESTAFETA_SMTPS_PORT: '0' });
  const { slug, key } = await s.tenant();
  t.ok(s.svc.ports.smtps && s.svc.ports.smtps !== s.svc.ports.smtp);
  const c = await smtpConnect(t, s.svc.ports.smtps as number, { secure: true });
  t.equal(c.conn.secure, true);
  t.equal(c.conn.allowsAuth, true);
  t.equal(await c.login(slug, key), null);
  const raw = await lineClient(t, s.svc.ports.smtps as number, true);
  const ehlo = await raw.cmd('EHLO client.test');
  t.notMatch(ehlo, /STARTTLS/, 'no STARTTLS once secure');
  t.match(ehlo, /AUTH PLAIN LOGIN/);
});
