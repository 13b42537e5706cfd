/**
 * One delivery attempt of one mail (one recipient): the checks that drop or capture it without a
 * connection, then the recipient's copy (tracked, DKIM-signed) carried to the first host of its
 * route that gives a verdict (delivers or refuses for good). Returns an Outcome; never writes the store.
 */
import type { Db } from '../store/db';
import type { Spool } from '../spool/spool';
import { activeSigningKey, type AttemptRow } from './queue';
import type { Outcome } from './outcome';
import type { Router } from './route';
import type { Transport } from './transport';
import type { ComposePool } from './compose-pool';
import { isSandboxDomain, sandboxCapture } from '../lib/address';
import { mailbox } from '../tracking/links';
import { evaluateConsent } from '../consent/evaluate';

export interface AttemptDeps { db: Db; spool: Spool; router: Router; transport: Transport; composer: ComposePool; publicUrl: string; secret: Buffer; hostname: string }

const domainOf = (address: string | null): string | null => (address && address.includes('@') ? address.slice(address.lastIndexOf('@') + 1).toLowerCase() : null);

/** Decisions taken before any connection (spec, Mail delivery status: dropped without a charge). */
export function precheck(mail: AttemptRow): Outcome | null {
  const list = mail.suppressed_list;
  // Spec, Mail delivery status: a suppressed address ends dropped without a charge, also when it
  // was suppressed after acceptance.
  if (list) return { kind: 'dropped', uncharge: true, detail: `recipient is on the ${list} list` };
  if (mail.attachment_bytes > mail.attachment_max_bytes) {
    return { kind: 'dropped', uncharge: true, detail: `attachments weigh ${mail.attachment_bytes} bytes, over the instance's functional limit of ${mail.attachment_max_bytes} bytes` };
  }
  // The accept path captures sandbox mail itself; this catches rows queued by an older version.
  if (isSandboxDomain(mail.rcpt_domain)) return { kind: 'sent', ...sandboxCapture };
  return null;
}

/** The bytes this recipient receives: tracking, then the signature over the final headers. */
export async function composeCopy(d: AttemptDeps, mail: AttemptRow): Promise<Buffer> {
  const raw = await d.spool.read(mail.spool_file);
  const senderDomain = domainOf(mail.sender_email);
  const row = senderDomain ? activeSigningKey(d.db, mail.instance_id, senderDomain) : undefined;
  const key = row ? { id: row.id, domain: row.domain, selector: row.selector, pem: row.private_key } : null;
  return d.composer.compose({
    raw, mailId: mail.mail_id, publicUrl: d.publicUrl, secret: d.secret, hostname: d.hostname, key, received: receivedHeader(d.hostname, mail),
    sender: mail.sender_email, returnPath: returnPath(d, mail),
  });
}

/** VERP, signed (tracking/links.ts): a bounce to it names the mail (CONTRACT §5). */
const returnPath = (d: AttemptDeps, mail: AttemptRow): string => mailbox(d.secret, 'bounces', mail.mail_id, domainOf(mail.sender_email) ?? d.hostname);

/**
 * The trace header of the platform's hop (RFC 5321 §4.4; spec, send rule 2: `Received` is
 * written by the platform): which door took the message, its msg_id and when. The client's
 * address is not kept, so there is no `from` clause; every value is ours or an address that
 * validation already held to one line.
 */
export function receivedHeader(hostname: string, mail: Pick<AttemptRow, 'door' | 'msg_id' | 'rcpt' | 'received_at'>): string {
  const protocol = mail.door === 'smtp' ? 'ESMTPSA' : 'HTTP';
  const date = new Date(mail.received_at).toUTCString().replace(/GMT$/, '+0000');
  return `Received: by ${hostname} (Estafeta) with ${protocol} id ${mail.msg_id}\r\n\tfor <${mail.rcpt}>; ${date}\r\n`;
}

/**
 * Spec, Mail delivery status: a mail accepted with 200 can later end dropped, without a charge,
 * for "a recipient lacking required consent or having revoked it", as for a suppressed address.
 * Consent is judged again before each attempt, as the suppression lists are: a revocation
 * recorded while the mail waited (a deferral) stops it, and GET /v1/consent-rules/resolve's
 * verdict stays the one the delivery applies. Test mode skips it, as at acceptance.
 */
export function consentCheck(db: Db, mail: AttemptRow): Outcome | null {
  if (mail.consent_required !== 1 || mail.test_mode === 1 || mail.sender_id === null) return null;
  const verdict = evaluateConsent(db, mail.instance_id, mail.sender_id, mail.rcpt);
  return verdict.allowed ? null : { kind: 'dropped', uncharge: true, detail: `consent: ${verdict.detail}` };
}

/**
 * The copy goes to the route's hosts in preference order until one gives a verdict. A temporary
 * failure of any kind (unreachable, a 4xx to the session, MAIL, RCPT or DATA) carries it on to
 * the next host in the same attempt, as Postfix's smtp client does with the recipients a soft
 * error left undelivered while a server remains; a 2xx is final, and so is a 5xx, except from a
 * host reached after a better one answered 4xx: a backup refusing what the primary only
 * postponed (greylisting, a full mailbox) is not the domain's verdict, and a bounce would put the
 * address on the restrictions list for good. The mail then waits for its retry with the
 * primary's reply. A deferral reports the most telling reply (an SMTP reply over a connection
 * error) and names every host tried, so the log and a later expiry keep the real cause.
 * `expiry` is the queue-age verdict (queue.ts, expiredOutcome), judged after the checks that drop.
 */
export async function attemptDelivery(d: AttemptDeps, mail: AttemptRow, expiry: (mail: AttemptRow) => Outcome | null): Promise<Outcome> {
  const early = precheck(mail) ?? consentCheck(d.db, mail) ?? expiry(mail);
  if (early) return early;
  const route = await d.router.route(mail.rcpt_domain);
  if (route.kind === 'outcome') return route.outcome;
  const copy = await composeCopy(d, mail);
  const envelope = { from: returnPath(d, mail), to: mail.rcpt };
  const tried: { where: string; outcome: Outcome & { response: string } }[] = [];
  // The first host that answered a temporary failure with an SMTP reply (not a failed connection).
  let postponed: (typeof tried)[number] | undefined;
  for (const hop of route.hops) {
    const where = `${hop.host} [${hop.address}]:${hop.port}`;
    const outcome = await d.transport.send(hop, envelope, copy);
    if (outcome.kind === 'dropped') return outcome; // the transport never drops; kept total for the types
    if (outcome.kind !== 'deferred' && !(outcome.kind === 'bounced' && postponed)) return { ...outcome, detail: where };
    tried.push({ where, outcome });
    if (outcome.kind === 'bounced') break;
    if (!postponed && /^4\d\d\b/.test(outcome.response)) postponed = tried[tried.length - 1];
  }
  const reported = postponed ?? tried.at(-1);
  if (!reported) return { kind: 'deferred', scope: 'site', response: '451 4.4.0 no route' };
  const others = tried.filter((t) => t !== reported).map((t) => `${t.where}: ${t.outcome.response}`);
  return { ...reported.outcome, detail: others.length ? `${reported.where}; also tried ${others.join('; ')}` : reported.where };
}
