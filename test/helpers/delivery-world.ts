/**
 * A small world for delivery tests: a DNS responder, an SMTP sink as the MX of example.test, the
 * service pointed at both, and a tenant whose domain brand.test is verified the operator's way
 * (CLI `domain add`, every record published in the zone, `domain validate`, `sender add`). Mail
 * comes in through the real door: POST /v1/mails/send from news@brand.test.
 */
import { startDns, resolveInZone, type DnsServer, type Zone } from './dns-server';
import { startSink, type Sink, type SinkScript } from './smtp-sink';
import { startTestService, type CliResult, type TestService } from './service';
import type { Db } from '../../src/store/db';

export const SENDER = 'news@brand.test';
export const HTML = '<p>Hello <a href="https://example.org/a?x=1&amp;y=2">link</a></p>';

export interface Sent { msgId: string; mailIds: string[] }
/** POST /v1/mails/send from news@brand.test to `to` (one mail per address); extra body fields override. */
export type SendFn = (to: string[], extra?: Record<string, unknown>) => Promise<Sent>;

export interface World {
  dns: DnsServer; sink: Sink; ts: TestService; zone: Zone; instanceId: number; slug: string;
  send: SendFn;
  txtResolver: (name: string, type: string) => Promise<string[][]>;
}

type ApiFn = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
type CliFn = (...args: string[]) => Promise<CliResult>;

export const baseZone = (): Zone => ({
  'example.test': { MX: [{ exchange: 'mx.example.test', priority: 10 }] },
  'mx.example.test': { A: ['127.0.0.1'] },
});

export async function startWorld(t: { teardown(fn: () => unknown): void }, o: { script?: SinkScript; env?: Record<string, string>; zone?: Zone } = {}): Promise<World> {
  const sink = await startSink(t, o.script);
  const zone: Zone = { ...baseZone(), ...(o.zone ?? {}) };
  const dns = await startDns(t, zone);
  const ts = await startTestService(t, {
    ESTAFETA_DNS_SERVERS: dns.address, ESTAFETA_DELIVERY_PORT: String(sink.port), ESTAFETA_RETRY_DELAYS: '1', ...(o.env ?? {}),
  });
  const { slug, instance } = await ts.tenant();
  const api: ApiFn = (method, path, body) => ts.api(method, path, { body });
  await verifyBrand(api, ts.cli, slug, zone, dns);
  const txtResolver = async (name: string, type: string): Promise<string[][]> => {
    const answers = resolveInZone(zone, name, type) ?? [];
    const txt = answers.filter((a) => a.type === 'TXT').map((a) => (a.data as Buffer[]).map((b) => b.toString()));
    if (!txt.length) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return txt;
  };
  return { dns, sink, ts, zone, instanceId: instance.id as number, slug, send: sender(api), txtResolver };
}

/** A send through the real HTTP door; the mail ids come from GET /v1/mails?msg_id=, in the order of `to`. */
export function sender(api: ApiFn): SendFn {
  return async (to, extra = {}) => {
    const r = await api('POST', '/v1/mails/send', { sender_email: SENDER, to: to.map((email) => ({ email })), subject: 'Hello', html: HTML, ...extra });
    if (r.status !== 200) throw new Error(`send failed: ${r.status} ${JSON.stringify(r.body)}`);
    const msgId = String(r.body.message_id);
    const list = await api('GET', `/v1/mails?msg_id=${encodeURIComponent(msgId)}`);
    const rows = (list.body?.data ?? []) as { mail_id: string; to: string }[];
    const mailIds = to.map((rcpt) => rows.find((m) => m.to === rcpt)?.mail_id ?? '');
    if (mailIds.some((id) => !id)) throw new Error(`mails of ${msgId} not listed: ${JSON.stringify(list.body)}`);
    return { msgId, mailIds };
  };
}

interface Rec { type: string; host: string; value: string; priority: number | null }

/**
 * Registers brand.test with the CLI, publishes its DKIM TXT (operator) and every record of its
 * dns_records (customer), validates it and registers news@brand.test.
 */
export async function verifyBrand(api: ApiFn, cli: CliFn, slug: string, zone: Zone, dns: DnsServer): Promise<void> {
  const added = await cli('domain', 'add', slug, 'brand.test', '--json');
  if (added.code !== 0) throw new Error(`domain add failed: ${added.stdout}`);
  const dkim = await cli('domain', 'dkim', slug, 'brand.test', '--json');
  for (const s of (dkim.json as { selectors: { cname_target: string; txt: string }[] }).selectors) zone[s.cname_target] = { TXT: [s.txt] };
  const list = await api('GET', '/v1/domains');
  const d = (list.body.data as { domain: string; dns_records: Record<string, Rec | Rec[]> }[]).find((x) => x.domain === 'brand.test');
  if (!d) throw new Error('brand.test not listed');
  for (const r of Object.values(d.dns_records).flat()) {
    const z = (zone[r.host] ??= {});
    if (r.type === 'CNAME') z.CNAME = r.value;
    if (r.type === 'MX') z.MX = [{ exchange: r.value, priority: r.priority ?? 10 }];
    if (r.type === 'TXT') z.TXT = [...(z.TXT ?? []), r.value];
  }
  dns.setZone(zone);
  const v = await cli('domain', 'validate', slug, 'brand.test', '--json');
  if (v.code !== 0 || !v.json.is_verified) throw new Error(`domain validate did not verify: ${v.stdout}`);
  const s = await cli('sender', 'add', slug, SENDER, '--name', 'Brand News', '--json');
  if (s.code !== 0) throw new Error(`sender add failed: ${s.stdout}`);
}

export interface MailState { status: number; attempts: number; opens: number; clicks: number; sent_at: number | null; next_attempt_at: number | null }

/** Observes the store (read only): the delivery state of one mail. */
export function mailState(svc: { db: Db }, mailId: string): MailState {
  return svc.db.prepare('SELECT status, attempts, opens, clicks, sent_at, next_attempt_at FROM mails WHERE mail_id = ?').get(mailId) as MailState;
}

/** The delivery outcomes in a mail's log, oldest first (accept's received/queued rows left out). */
export function mailLogs(svc: { db: Db }, mailId: string): { event: string; status: number; detail: string | null; response: string | null }[] {
  return svc.db.prepare(
    `SELECT l.event, l.status, l.detail, l.response FROM mail_logs l JOIN mails m ON m.id = l.mail_row
      WHERE m.mail_id = ? AND l.event NOT IN ('received', 'queued') ORDER BY l.id`,
  ).all(mailId) as never;
}
