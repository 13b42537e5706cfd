// Consent evaluation at send (spec, "Consent evaluation at send") through real sends: HTTP
// POST /v1/mails/send and SMTP submission from the sandbox sender, consents registered over the
// API, the sender's purposes declared with the real CLI.
import t from 'tap';
import nodemailer from 'nodemailer';
import { startTestService, type TapLike, type TestService } from '../helpers/service';

interface World {
  s: TestService;
  slug: string;
  key: string;
  sender: string;
  rcpt: (local: string) => string;
  declare: (...consent: string[]) => Promise<void>;
  consent: (local: string, purpose: string, action: 'allow' | 'deny', contactType?: string) => Promise<void>;
  /** Sends one message to these locals; returns each recipient's final-at-acceptance status and log. */
  send: (locals: string[], extra?: Record<string, unknown>) => Promise<Record<string, { status: number; drop: string | null }>>;
  outcome: (msgId: string) => Promise<Record<string, { status: number; drop: string | null }>>;
}

async function world(t: TapLike): Promise<World> {
  const s = await startTestService(t, { ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'true' });
  const { slug, key } = await s.tenant();
  const sender = `sandbox@${slug}.sandbox.test`;
  const rcpt = (local: string): string => `${local}@${slug}.sandbox.test`;
  const purposes: Record<string, number> = Object.fromEntries((await s.api('GET', '/v1/consent-purposes')).body.data.map((p: { code: string; id: number }) => [p.code, p.id]));
  const term = await s.cli('term', 'add', slug, '--name', 'Marketing', '--type', 'marketing', '--purposes', 'marketing,newsletter', '--channels', 'mail', '--json');
  await s.cli('term', 'version', 'add', slug, String(term.json.id), '--version', 'v1', '--body', 'Text', '--current', '--json');

  const declare = async (...consent: string[]): Promise<void> => {
    const r = await s.cli('sender', 'consent', slug, sender, ...consent.flatMap((c) => ['--consent', c]), '--json');
    if (r.code !== 0) throw new Error(r.stdout + r.stderr);
  };
  const consent: World['consent'] = async (local, purpose, action, contactType = 'email_address') => {
    const res = await s.api('POST', '/v1/consent-events', { body: { term_id: term.json.id, method: 'single_opt_in',
      rules: [{ contact_type: contactType, contact: rcpt(local), purpose_id: purposes[purpose], action }] } });
    if (res.status !== 201) throw new Error(res.text);
  };
  const outcome: World['outcome'] = async (msgId) => {
    const list = await s.api('GET', `/v1/mails?msg_id=${encodeURIComponent(msgId)}`);
    const out: Record<string, { status: number; drop: string | null }> = {};
    for (const m of list.body.data as Array<{ mail_id: string; to: string; status: number }>) {
      const logs = (await s.api('GET', `/v1/mails/${m.mail_id}/logs`)).body.data as Array<{ event: string; detail: string | null }>;
      out[m.to.slice(0, m.to.indexOf('@'))] = { status: m.status, drop: logs.find((l) => l.event === 'dropped')?.detail ?? null };
    }
    return out;
  };
  const send: World['send'] = async (locals, extra = {}) => {
    const res = await s.api('POST', '/v1/mails/send', { body: { sender_email: sender, to: locals.map((l) => ({ email: rcpt(l) })), subject: 'Offer', html: '<p>Offer</p>', ...extra } });
    if (res.status !== 200) throw new Error(res.text);
    return outcome(res.body.message_id);
  };
  return { s, slug, key, sender, rcpt, declare, consent, send, outcome };
}

t.test('opt_in: sent only when granted; revoked and no record end 4 dropped with the reason in the log', async (t) => {
  const w = await world(t);
  await w.consent('granted', 'marketing', 'allow');
  await w.consent('revoked', 'marketing', 'allow');
  await w.consent('revoked', 'marketing', 'deny');
  await w.declare('marketing:opt_in');
  const r = await w.send(['granted', 'revoked', 'none']);
  t.not(r.granted.status, 4, 'granted is sent');
  t.equal(r.granted.drop, null);
  t.equal(r.revoked.status, 4);
  t.match(r.revoked.drop, /purpose marketing \(opt_in\): explicit revocation/);
  t.equal(r.none.status, 4);
  t.match(r.none.drop, /purpose marketing \(opt_in\): missing required consent/);
});

t.test('opt_out: sent unless revoked', async (t) => {
  const w = await world(t);
  await w.consent('granted', 'marketing', 'allow');
  await w.consent('revoked', 'marketing', 'deny');
  await w.declare('marketing:opt_out');
  const r = await w.send(['granted', 'revoked', 'none']);
  t.not(r.granted.status, 4);
  t.equal(r.revoked.status, 4);
  t.match(r.revoked.drop, /purpose marketing \(opt_out\): explicit revocation/);
  t.not(r.none.status, 4, 'no record is sent in opt_out');
  t.equal(r.none.drop, null);
});

t.test('with two purposes all must pass: the failing one is named', async (t) => {
  const w = await world(t);
  await w.declare('marketing:opt_in', 'newsletter:opt_out');
  await w.consent('both', 'marketing', 'allow');
  await w.consent('news', 'marketing', 'allow');
  await w.consent('news', 'newsletter', 'deny');
  await w.consent('onlynews', 'newsletter', 'allow');
  const r = await w.send(['both', 'news', 'onlynews']);
  t.not(r.both.status, 4, 'marketing granted, newsletter without record: sent');
  t.equal(r.news.status, 4);
  t.match(r.news.drop, /purpose newsletter \(opt_out\): explicit revocation/);
  t.equal(r.onlynews.status, 4);
  t.match(r.onlynews.drop, /purpose marketing \(opt_in\): missing required consent/);
});

t.test('test_mode skips the evaluation; a sender declaring nothing needs no consent', async (t) => {
  const w = await world(t);
  await w.consent('revoked', 'marketing', 'deny');
  await w.declare('marketing:opt_in');
  const test = await w.send(['none', 'revoked'], { test_mode: true });
  t.not(test.none.status, 4);
  t.not(test.revoked.status, 4);
  const r = await w.s.cli('sender', 'consent', w.slug, w.sender, '--none', '--json');
  t.equal(r.json.is_consent_required, false);
  const plain = await w.send(['none', 'revoked']);
  t.not(plain.none.status, 4, 'transactional sender');
  t.not(plain.revoked.status, 4);
});

t.test('a revocation stored against a uniquecode is returned on resolve but does not stop a mail', async (t) => {
  const w = await world(t);
  await w.declare('marketing:opt_out');
  // The uniquecode even spells the address: still not an email identifier.
  await w.consent('coded', 'marketing', 'deny', 'uniquecode');
  const resolved = await w.s.api('GET', `/v1/consent-rules/resolve?contacts=${encodeURIComponent(w.rcpt('coded'))}&contact_types=uniquecode&channel=mail&purpose=marketing`);
  t.equal(resolved.body.results[0].decisions[0].state, 'revoked');
  const r = await w.send(['coded']);
  t.not(r.coded.status, 4);
  t.equal(r.coded.drop, null);
});

t.test('resolve gives the verdict the send applies', async (t) => {
  const w = await world(t);
  await w.consent('granted', 'marketing', 'allow');
  await w.consent('revoked', 'marketing', 'deny');
  for (const mode of ['opt_in', 'opt_out'] as const) {
    await w.declare(`marketing:${mode}`);
    const locals = ['granted', 'revoked', 'none'];
    const sent = await w.send(locals);
    const res = await w.s.api('GET', `/v1/consent-rules/resolve?contacts=${locals.map((l) => encodeURIComponent(w.rcpt(l))).join(',')}&contact_types=email_address,email_address,email_address&purpose=marketing`);
    locals.forEach((l, i) => {
      const verdict = res.body.results[i].decisions[0].send_verdict[mode];
      t.equal(verdict === 'sent', sent[l].status !== 4, `${mode} ${l}: resolve says ${verdict}`);
    });
  }
});

t.test('a dropped recipient is not charged to the send quota', async (t) => {
  const w = await world(t);
  await w.consent('granted', 'marketing', 'allow');
  await w.declare('marketing:opt_in');
  const limits = await w.s.cli('instance', 'limits', w.slug, '--send-limit', '1', '--json');
  t.equal(limits.code, 0, limits.stdout);
  const r = await w.send(['none1', 'none2', 'granted']);
  t.same([r.none1.status, r.none2.status], [4, 4]);
  t.not(r.granted.status, 4, 'the one charged recipient fits a quota of 1');
  const over = await w.s.api('POST', '/v1/mails/send', { body: { sender_email: w.sender, to: [{ email: w.rcpt('granted') }], subject: 'Again', html: '<p>Again</p>' } });
  t.equal(over.status, 402, 'the quota is enforced: the charged recipient used it');
});

t.test('a mail submitted over SMTP is evaluated the same way', async (t) => {
  const w = await world(t);
  await w.consent('granted', 'marketing', 'allow');
  await w.consent('revoked', 'marketing', 'deny');
  await w.declare('marketing:opt_in');
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: w.s.svc.ports.smtp, secure: false, ignoreTLS: true, auth: { user: w.slug, pass: w.key } });
  t.teardown(() => transport.close());
  const info = await transport.sendMail({ from: w.sender, to: [w.rcpt('granted'), w.rcpt('revoked'), w.rcpt('none')], subject: 'Offer', text: 'Offer' });
  const msgId = /queued as (\S+)/.exec(info.response)?.[1];
  t.ok(msgId, info.response);
  const r = await w.outcome(msgId as string);
  t.not(r.granted.status, 4);
  t.equal(r.revoked.status, 4);
  t.match(r.revoked.drop, /explicit revocation/);
  t.equal(r.none.status, 4);
  t.match(r.none.drop, /missing required consent/);
});
