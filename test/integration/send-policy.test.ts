import t from 'tap';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { sendFixture } from './send-fixture';
import { spoolRefOf } from '../helpers/spool-files';
import { allVerified, domainFixture, states } from './domains-fixture';

const MB = 1024 * 1024;

t.test('sender and domain rules: 404 sender_not_found, 409 domain_sender_not_verified, 409 sandbox_relay_restricted', async (t) => {
  const f = await domainFixture(t);
  f.dns.setZone(f.zone());
  t.same(states((await f.validate()).body), allVerified);
  const sender = await f.s.cli('sender', 'add', f.slug, 'news@mail.example.com', '--json');
  t.equal(sender.code, 0, sender.stdout);
  const sandbox = `sandbox@${f.slug}.sandbox.test`;
  const body = (from: string, to: string) => ({ sender_email: from, to: [{ email: to }], subject: 's', html: 'h' });

  const unknown = await f.s.api('POST', '/v1/mails/send', { body: body('nobody@mail.example.com', 'a@example.org') });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'sender_not_found');

  const relay = await f.s.api('POST', '/v1/mails/send', { body: body(sandbox, 'someone@example.org') });
  t.equal(relay.status, 409);
  t.equal(relay.body.code, 'sandbox_relay_restricted');
  const mixed = await f.s.api('POST', '/v1/mails/send', { body: { ...body(sandbox, `a@${f.slug}.sandbox.test`), cc: [{ email: 'b@example.org' }] } });
  t.equal(mixed.body.code, 'sandbox_relay_restricted', 'every recipient counts, cc included');

  const revoked = await f.s.cli('domain', 'revoke', f.slug, 'mail.example.com', '--json');
  t.equal(revoked.code, 0, revoked.stdout);
  const notVerified = await f.s.api('POST', '/v1/mails/send', { body: body('news@Mail.Example.COM', 'a@example.org') });
  t.equal(notVerified.status, 409, JSON.stringify(notVerified.body));
  t.equal(notVerified.body.code, 'domain_sender_not_verified', 'the sender address is normalized before lookup');
});

t.test('templates: 404, draft 409 unless test_mode, content materialized at acceptance', async (t) => {
  const f = await sendFixture(t);
  const dir = t.testdir({ 'v1.html': '<p>version one</p>', 'v2.html': '<p>version two</p>' });
  const add = await f.s.cli('template', 'add', f.slug, '--name', 'Welcome', '--subject', 'Welcome!', '--html-file', path.join(dir, 'v1.html'), '--json');
  t.equal(add.code, 0, add.stdout);
  const id = add.json.id as number;
  const tpl = { subject: undefined, html: undefined };

  for (const templateId of [999999, 0, -1]) {
    const missing = await f.send({ ...tpl, template_id: templateId });
    t.equal(missing.status, 404, `template_id ${templateId}`);
    t.equal(missing.body.code, 'mail_template_not_found');
  }
  const draft = await f.send({ ...tpl, template_id: id });
  t.equal(draft.status, 409);
  t.equal(draft.body.code, 'template_not_public');
  const test = await f.send({ ...tpl, template_id: id, test_mode: true });
  t.equal(test.status, 200, 'a draft passes with test_mode');

  t.equal((await f.s.cli('template', 'update', f.slug, String(id), '--status', 'public', '--json')).code, 0);
  const sent = await f.send({ ...tpl, template_id: id });
  t.equal(sent.status, 200);
  const list = await f.s.api('GET', `/v1/mails?msg_id=${sent.body.message_id}`);
  t.equal(list.body.data[0].subject, 'Welcome!', 'the template subject');
  t.equal((await f.s.cli('template', 'update', f.slug, String(id), '--subject', 'Changed', '--html-file', path.join(dir, 'v2.html'), '--json')).code, 0);
  const again = await f.s.api('GET', `/v1/mails?msg_id=${sent.body.message_id}`);
  t.equal(again.body.data[0].subject, 'Welcome!', 'a later edit changes nothing already accepted');
  const next = await f.send({ ...tpl, template_id: id });
  t.equal((await f.s.api('GET', `/v1/mails?msg_id=${next.body.message_id}`)).body.data[0].subject, 'Changed', 'the next send uses the edit');
});

t.test('plan: 402 subscription_inactive, 402 plan_send_limit_exceeded with limit, remaining and reset_at', async (t) => {
  const f = await sendFixture(t);
  t.equal((await f.s.cli('instance', 'limits', f.slug, '--send-limit', '3', '--json')).code, 0);
  const two = await f.send({ to: [{ email: f.rcpt('a') }, { email: f.rcpt('b') }] });
  t.equal(two.status, 200);
  const over = await f.send({ to: [{ email: f.rcpt('c') }, { email: f.rcpt('d') }] });
  t.equal(over.status, 402);
  t.match(over.body, { code: 'plan_send_limit_exceeded', limit: 3, remaining: 1, reset_at: /Z$/ });
  t.ok(Date.parse(over.body.reset_at) > Date.now(), 'the cycle renews in the future');
  t.equal((await f.send({ to: [{ email: f.rcpt('c') }] })).status, 200, 'the last one fits');
  t.equal((await f.send({ to: [{ email: f.rcpt('e') }] })).body.remaining, 0);

  t.equal((await f.s.cli('instance', 'limits', f.slug, '--send-limit', 'none', '--subscription', 'inactive', '--json')).code, 0);
  const inactive = await f.send();
  t.equal(inactive.status, 402);
  t.equal(inactive.body.code, 'subscription_inactive');
});

t.test('concurrent sends never overrun the plan quota', async (t) => {
  const f = await sendFixture(t);
  t.equal((await f.s.cli('instance', 'limits', f.slug, '--send-limit', '10', '--json')).code, 0);
  const results = await Promise.all(Array.from({ length: 25 }, (_, i) => f.send({ to: [{ email: f.rcpt(`c${i}`) }] })));
  t.equal(results.filter((r) => r.status === 200).length, 10);
  t.equal(results.filter((r) => r.status === 402).length, 15);
});

t.test('a send with a quota goes through while another process (the CLI) holds and commits the write lock', async (t) => {
  const f = await sendFixture(t);
  t.equal((await f.s.cli('instance', 'limits', f.slug, '--send-limit', '1000', '--json')).code, 0);
  t.equal((await f.send()).status, 200, 'a first send (warms every cache)');
  // Another process takes the write lock, changes a row and commits 600 ms later, as a CLI
  // command does. The send's batch reads the quota, then writes: it must wait for the lock, not
  // fail on a snapshot the other commit made stale (SQLITE_BUSY_SNAPSHOT, which no timeout retries).
  const holder = spawn(process.execPath, ['-e', `
    const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
    const db = new Database(${JSON.stringify(path.join(f.s.dataDir, 'estafeta.db'))});
    db.pragma('busy_timeout = 10000');
    db.exec('BEGIN IMMEDIATE');
    db.prepare("UPDATE instances SET name = name || '' WHERE slug = ?").run(${JSON.stringify(f.slug)});
    process.stdout.write('locked\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600);
    db.exec('COMMIT');
  `], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => holder.once('exit', resolve));
  await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
  const r = await f.send({ subject: 'during the lock' });
  t.same([r.status, r.body.code], [200, undefined], 'accepted once the lock is free');
  await exited;
  t.equal((await f.s.api('GET', `/v1/mails?msg_id=${r.body.message_id}`)).body.data.length, 1);
});

t.test('bandwidth: 429 with Retry-After when the bucket is empty, 413 over the burst capacity', async (t) => {
  const f = await sendFixture(t);
  t.equal((await f.s.cli('instance', 'limits', f.slug, '--bandwidth-bytes-per-second', '1000', '--bandwidth-burst-bytes', '20000', '--json')).code, 0);
  const html = `<p>${'x'.repeat(8000)}</p>`;
  t.equal((await f.send({ html })).status, 200);
  t.equal((await f.send({ html })).status, 200);
  const limited = await f.send({ html });
  t.equal(limited.status, 429);
  t.equal(limited.body.code, 'rate_limit_exceeded');
  t.match(limited.headers.get('retry-after'), /^\d+$/);
  t.ok(Number(limited.headers.get('retry-after')) >= 1);
  const burst = await f.send({ html: `<p>${'x'.repeat(30000)}</p>` });
  t.equal(burst.status, 413, 'a mail larger than the burst capacity can never pass');
  t.equal(burst.body.code, 'request_too_large');
});

t.test('bandwidth: a rate lowered while the bucket refilled judges traffic from the next send on, not the idle time before it', async (t) => {
  const f = await sendFixture(t);
  t.equal((await f.s.cli('instance', 'limits', f.slug, '--bandwidth-bytes-per-second', '100000', '--bandwidth-burst-bytes', '20000', '--json')).code, 0);
  const html = `<p>${'x'.repeat(8000)}</p>`;
  t.equal((await f.send({ html })).status, 200);
  t.equal((await f.send({ html })).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 400)); // at 100 kB/s the bucket is full again
  t.equal((await f.s.cli('instance', 'limits', f.slug, '--bandwidth-bytes-per-second', '1', '--json')).code, 0);
  const next = await f.send({ html });
  t.equal(next.status, 200, 'the bucket filled under the old rate');
  const after = await f.send({ html });
  t.equal(after.status, 200, 'what is left of the burst');
  const limited = await f.send({ html });
  t.equal(limited.status, 429, 'then the new rate holds');
  t.ok(Number(limited.headers.get('retry-after')) > 1000, 'a refill at 1 byte per second');
});

t.test('the assembled message over 15 MB is 413, although each field is within its limit', async (t) => {
  const f = await sendFixture(t);
  const att = (n: string) => ({ type: 'application/octet-stream', filename: n, content: Buffer.alloc(4.5 * MB, 3).toString('base64') });
  const r = await f.send({ html: 'h'.repeat(4 * MB), attachments: [att('a'), att('b')] });
  t.equal(r.status, 413, JSON.stringify(r.body).slice(0, 200));
  t.equal(r.body.code, 'request_too_large');
});

t.test('dropped at acceptance, not charged: suppressed address, functional attachment limit', async (t) => {
  const f = await sendFixture(t);
  t.equal((await f.s.cli('suppression', 'add', f.slug, f.rcpt('gone'), '--list', 'unsubscribes', '--json')).code, 0);
  t.equal((await f.s.cli('instance', 'limits', f.slug, '--send-limit', '5', '--attachment-max-bytes', '1000', '--json')).code, 0);
  const r = await f.send({ to: [{ email: f.rcpt('gone') }, { email: f.rcpt('here') }] });
  t.equal(r.status, 200);
  const list = (await f.s.api('GET', `/v1/mails?msg_id=${r.body.message_id}`)).body.data;
  const gone = list.find((m: any) => m.to === f.rcpt('gone'));
  t.equal(gone.status, 4, 'the suppressed recipient is dropped');
  const logs = (await f.s.api('GET', `/v1/mails/${gone.mail_id}/logs`)).body.data;
  t.same(logs.map((l: any) => l.event), ['received', 'dropped']);
  t.match(logs[1].detail, /unsubscribes/);

  const heavy = await f.send({ to: [{ email: f.rcpt('x') }, { email: f.rcpt('y') }], attachments: [{ type: 'text/plain', filename: 'a.txt', content: Buffer.alloc(2000, 65).toString('base64') }] });
  t.equal(heavy.status, 200, 'accepted with 200');
  const dropped = (await f.s.api('GET', `/v1/mails?msg_id=${heavy.body.message_id}`)).body.data;
  t.same(dropped.map((m: any) => m.status), [4, 4], 'every recipient dropped');
  const why = (await f.s.api('GET', `/v1/mails/${dropped[0].mail_id}/logs`)).body.data;
  t.match(why[1].detail, /functional limit of 1000 bytes/);
  t.equal(spoolRefOf(f.s.svc.db, heavy.body.message_id), '', 'no spool bytes are kept when every recipient is dropped');
  // 5 allowed; charged so far: 1 ('here'). Four more fit, which proves the drops were not charged.
  const four = await f.send({ to: ['a', 'b', 'c', 'd'].map((l) => ({ email: f.rcpt(l) })) });
  t.equal(four.status, 200, 'dropped recipients were not charged');
});
