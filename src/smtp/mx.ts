/**
 * Inbound MX door (CONTRACT §2, ESTAFETA_MX_PORT): accepts mail only for the platform's own
 * addresses — VERP return paths bounces+<mail_id>.<sig>@<sender domain>, unsubscribe+<mail_id>.<sig>@<hostname>
 * (both signed, tracking/links.ts),
 * complaints@, postmaster@, abuse@ and dmarc@<hostname>, postmaster and abuse at a registered
 * domain, a bare postmaster — and refuses everything else with 550 5.1.1 (never an open relay).
 * DSNs (RFC 3464) and ARF reports (RFC 5965) are parsed with mailparser and handed to feedback.
 */
import { isUtf8 } from 'node:buffer';
import { type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { Db } from '../store/db';
import type { Config } from '../config/load';
import type { Logger } from '../lib/log';
import { CompletingServer, listenSmtp, type Listener } from './listen';
import { cutSpaceRuns } from '../lib/header-section';
import { openSpool } from '../spool/spool';
import { isRegisteredDomain } from '../store/domains';
import { domainOf } from '../lib/address';
import { applyComplaint, applyDsnFailure, applyUnsubscribeMail, dsnBlockFor, dsnRecipients, findMailById, isPermanentFailure, mailIdsIn, mailOfMailbox, plainBounceFailures, reportFields } from '../delivery/feedback';
import { trackingSecret } from '../tracking/links';

export interface MxDeps { db: Db; config: Readonly<Config>; log: Logger }

type Role = { kind: 'bounce' | 'unsubscribe'; mailId: string } | { kind: 'complaints' };
const MAX_REPORT_BYTES = 10 * 1024 * 1024;
/** Bytes of reports all sessions may hold at once while receiving them (six at the maximum size). */
const MAX_HELD_BYTES = 64 * 1024 * 1024;
let heldBytes = 0;
/** What the MX holds of reports now (the /metrics gauge; an operator sees why reports are deferred). */
export const heldReportBytes = (): number => heldBytes;
/** Sessions the MX serves at once (Postfix's default process limit is 100); the next is told 421. */
const MAX_SESSIONS = 100;

/** Roles of the accepted recipients of each session's transaction. */
const sessionRoles = new WeakMap<SMTPServerSession, Role[]>();
const smtpError = (code: number, text: string): Error & { responseCode: number } => Object.assign(new Error(text), { responseCode: code });

// At the platform's host name: complaints@ (feedback loops), postmaster (RFC 5321 §4.5.1: every
// server accepts it), abuse (RFC 2142, where feedback loops also send) and dmarc (the rua the
// domain records ask for: aggregate reports are received and logged, not kept).
const reportMailboxes = new Set(['complaints', 'postmaster', 'abuse', 'dmarc']);
// At a sender domain (its MX points here, as dns_records asks): the RFC 5321 and 2142 role boxes.
const domainMailboxes = new Set(['postmaster', 'abuse']);

/** What an address of ours is for, or null when it is not ours. */
export function roleOf(db: Db, hostname: string, secret: Buffer, address: string): Role | null {
  const at = address.lastIndexOf('@');
  // RFC 5321 §4.5.1: a bare "postmaster" (no domain) MUST be accepted.
  if (at === -1) return address.toLowerCase() === 'postmaster' ? { kind: 'complaints' } : null;
  const local = address.slice(0, at).toLowerCase();
  const domain = address.slice(at + 1).toLowerCase();
  if (reportMailboxes.has(local) && domain === hostname) return { kind: 'complaints' };
  if (domainMailboxes.has(local) && isRegisteredDomain(db, domain)) return { kind: 'complaints' };
  const m = /^(bounces|unsubscribe)\+([a-z0-9._-]+)$/i.exec(address.slice(0, at));
  if (!m) return null;
  const mail = mailOfMailbox(db, secret, m[1], m[2]);
  if (!mail) return null;
  if (m[1].toLowerCase() === 'unsubscribe') return domain === hostname ? { kind: 'unsubscribe', mailId: mail.mail_id } : null;
  // Only the return path the mail was sent with (attempt.ts): its id at the sender's domain.
  const returnDomain = mail.sender_email ? domainOf(mail.sender_email).toLowerCase() : hostname;
  return domain === returnDomain ? { kind: 'bounce', mailId: mail.mail_id } : null;
}

/**
 * The body of the first MIME part of the given type, transfer-decoded (a report part may come in
 * base64, as RFC 6533's message/global-delivery-status often does). mailparser folds
 * message/delivery-status and message/feedback-report parts into the text, so the part is cut
 * from the raw bytes. Forward searches, each from where the last stopped, and one backward search
 * for the part's first header line: linear in the message, whatever it holds (one backtracking
 * pattern took minutes on a crafted report, on the loop every door shares).
 */
export function reportPart(raw: string, type: string): string | null {
  // The field may be folded before its value (RFC 5322 §2.2.3).
  const header = new RegExp(`^Content-Type:[ \\t]*(?:\\r?\\n[ \\t]+)?${type.replace('/', '\\/')}\\b`, 'im').exec(raw);
  if (!header) return null;
  const blank = /\r?\n\r?\n/g; // the end of the part's header section
  blank.lastIndex = header.index;
  const start = blank.exec(raw);
  if (!start) return null;
  const body = start.index + start[0].length;
  const boundary = /\r?\n--/g;
  boundary.lastIndex = body;
  const end = boundary.exec(raw);
  const text = raw.slice(body, end ? end.index : raw.length);
  // The part's whole header section: from the line after its boundary (or the message's start).
  const partStart = raw.lastIndexOf('\n--', header.index);
  const headers = raw.slice(partStart < 0 ? 0 : partStart, start.index);
  const encoding = /^Content-Transfer-Encoding:[ \t]*([A-Za-z0-9-]+)/im.exec(headers)?.[1]?.toLowerCase();
  const bytes = encoding === 'base64' ? Buffer.from(text, 'base64') : Buffer.from(encoding === 'quoted-printable' ? decodeQuotedPrintable(text) : text, 'latin1');
  // A global DSN (RFC 6533) writes addresses and diagnostics in UTF-8: read as such when they are.
  return isUtf8(bytes) ? bytes.toString('utf8') : bytes.toString('latin1');
}

/**
 * RFC 2045 §6.7 quoted-printable, for a report part's fields: soft line breaks joined, =XX made
 * bytes. Not libqp: its trailing-space pattern backtracks (160k spaces held the loop 46 s), and
 * the MX takes mail from anyone; trailing spaces are trimmed by the field reader anyway.
 */
export function decodeQuotedPrintable(text: string): string {
  return text.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** mailparser reads a report for its structure and text: no conversions between html and text. */
const parseOptions = { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true };

/** The decoded html and text of each message attached whole (message/rfc822) to a report. */
async function quotedOriginals(parsed: ParsedMail): Promise<string[]> {
  const out: string[] = [];
  for (const a of parsed.attachments) {
    if (a.contentType.toLowerCase() !== 'message/rfc822') continue;
    try {
      const inner = await simpleParser(a.content, parseOptions);
      out.push(typeof inner.html === 'string' ? inner.html : '', inner.text ?? '');
    } catch {
      // An original past the parser's limits names no mail.
    }
  }
  return out;
}

/** Applies one received report; returns a line for the diagnostics log. */
async function handle(deps: MxDeps, secret: Buffer, received: Buffer, roles: Role[]): Promise<string> {
  const { db } = deps;
  // The MX takes mail from anyone: a report is read without long runs of spaces (lib/header-section).
  const raw = cutSpaceRuns(received);
  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(raw, parseOptions);
  } catch (err) {
    // Past the parser's limits (a 1 MB part header, over 1,000 parts): no report of ours, for good.
    throw Object.assign(new Error(`unparsable report: ${(err as Error).message}`), { permanent: true });
  }
  const ct = parsed.headers.get('content-type');
  const reportType = ct && typeof ct === 'object' && 'params' in ct ? String(ct.params['report-type'] ?? '').toLowerCase() : '';
  const text = raw.toString('latin1');
  const arfText = reportType === 'feedback-report' ? reportPart(text, 'message/feedback-report') : null;
  // RFC 6533's global DSN is labelled either way by the MTAs that write one.
  const dsnText = reportType === 'delivery-status' || reportType === 'global-delivery-status' ? reportPart(text, 'message/(?:global-)?delivery-status') : null;
  const now = Date.now();
  const removed: string[] = [];
  if (arfText !== null) {
    const fields = reportFields(arfText);
    const type = fields.get('feedback-type')?.[0] ?? 'abuse';
    // An authentication-failure report (DMARC ruf, RFC 6591) says nothing about the recipient's
    // wishes, and a not-spam report (RFC 5965 §7.3: the user marked it wanted) says the opposite.
    if (type.toLowerCase() === 'auth-failure') return 'authentication failure report: logged, no complaint';
    if (type.toLowerCase() === 'not-spam') return 'not-spam report: logged, no complaint';
    // The mail the report came back for: named by the signed return path it was sent to, else by
    // the signed mailboxes and links of the quoted original (its html is base64 in every copy we
    // send, so the attached message is read decoded too). A report to one mail's return path is
    // about that mail only, whatever else it quotes.
    const returned = roles.flatMap((r) => (r.kind === 'bounce' ? [r.mailId] : []));
    const ids = new Set(returned.length > 0 ? returned : [...mailIdsIn(db, text, secret), ...(await quotedOriginals(parsed)).flatMap((t) => mailIdsIn(db, t, secret))]);
    for (const id of ids) {
      const mail = findMailById(db, id);
      if (mail) applyComplaint(db, mail, type, now);
    }
    return `complaint (${type}) for ${[...ids].join(', ') || 'no known mail'}`;
  }
  for (const role of roles) {
    if (role.kind === 'unsubscribe') {
      const mail = findMailById(db, role.mailId);
      if (mail) applyUnsubscribeMail(db, mail, now);
    }
  }
  if (dsnText !== null) {
    // Each mail by the block that reports on its own recipient (RFC 3464 §2.3): one DSN may
    // carry a delay for one recipient and a failure for another.
    const blocks = dsnRecipients(dsnText);
    const outcomes: string[] = [];
    for (const role of roles) {
      if (role.kind !== 'bounce') continue;
      const mail = findMailById(db, role.mailId);
      const block = mail ? dsnBlockFor(blocks, mail.rcpt) : null;
      if (!mail || !block || !isPermanentFailure(block)) {
        outcomes.push(`${role.mailId}: no permanent failure for its recipient (${block ? `${block.action || 'no action'} ${block.status ?? ''}`.trim() : 'no block'})`);
        continue;
      }
      const file = applyDsnFailure(db, mail, block.status as string, block.diagnostic, now);
      if (file) removed.push(file);
      outcomes.push(`${role.mailId}: DSN failure ${block.status}`);
    }
    const spool = openSpool(deps.config.dataDir);
    await Promise.all(removed.map((f) => spool.remove(f)));
    return `DSN: ${outcomes.join('; ') || 'no mail of ours'}`;
  }
  const failures = plainBounceFailures(parsed.text ?? '', failedRecipients(parsed));
  if (failures.size > 0) {
    // Exim's and qmail's own bounces (feedback.ts plainBounceFailures): a mail whose recipient
    // they name bounces, with the reply quoted for it; they report only what they gave up on, so
    // a quoted 4xx (a retry timeout) is still a permanent failure (5.0.0).
    const outcomes: string[] = [];
    for (const role of roles) {
      if (role.kind !== 'bounce') continue;
      const mail = findMailById(db, role.mailId);
      if (!mail || !failures.has(mail.rcpt.toLowerCase())) {
        outcomes.push(`${role.mailId}: not among its failed recipients`);
        continue;
      }
      const quoted = failures.get(mail.rcpt.toLowerCase()) ?? null;
      const status = quoted?.status.startsWith('5') ? quoted.status : '5.0.0';
      const file = applyDsnFailure(db, mail, status, quoted?.reply ?? 'plain-text bounce: permanent failure', now);
      if (file) removed.push(file);
      outcomes.push(`${role.mailId}: bounce (plain text) ${status}`);
    }
    const spool = openSpool(deps.config.dataDir);
    await Promise.all(removed.map((f) => spool.remove(f)));
    return `plain bounce: ${outcomes.join('; ') || 'no mail of ours'}`;
  }
  return 'message without a report: ignored';
}

/** The addresses of X-Failed-Recipients (Exim), lowercased; none when the field is absent. */
function failedRecipients(parsed: ParsedMail): string[] {
  const value = parsed.headers.get('x-failed-recipients');
  const text = Array.isArray(value) ? value.join(',') : typeof value === 'string' ? value : '';
  return text.split(',').map((a) => a.trim().replace(/^<|>$/g, '').toLowerCase()).filter((a) => a.includes('@'));
}

function createServer(deps: MxDeps): CompletingServer {
  const hostname = deps.config.hostname;
  const secret = trackingSecret(deps.config.dataDir);
  return new CompletingServer({
    name: hostname,
    banner: 'Estafeta inbound MX',
    disableReverseLookup: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    size: MAX_REPORT_BYTES,
    maxClients: MAX_SESSIONS,
    logger: false,
    // The stop is bounded (CONTRACT §1): smtp-server's own default would hold it for 30 s.
    closeTimeout: deps.config.shutdownTimeout * 1000,
    // Roles belong to one transaction: a RSET or a new MAIL starts over (smtp-server keeps the
    // session object), so an aborted transaction's recipients never reach the next one's report.
    onMailFrom(_address, session, cb) {
      sessionRoles.delete(session);
      cb();
    },
    onRcptTo(address, session, cb) {
      const role = roleOf(deps.db, hostname, secret, address.address);
      if (!role) return cb(smtpError(550, `5.1.1 <${address.address}>: recipient not accepted here (no relay)`));
      sessionRoles.set(session, [...(sessionRoles.get(session) ?? []), role]);
      cb();
    },
    onData(stream: SMTPServerDataStream, session, cb) {
      // Counted while streaming, and nothing kept past the limit: the MX takes mail from anyone,
      // and a sender streaming a gigabyte must not make the one process hold it. Nor may many
      // senders at once: the reports held by all sessions share one budget, and a message that
      // would pass it is refused for now (452: retry later), as Postfix defers when its queue
      // file system is short (60 sessions of 10 MB took the process to 2 GB).
      const chunks: Buffer[] = [];
      let size = 0;
      let mine = 0;
      let deferred = false;
      const release = (): void => {
        heldBytes -= mine;
        mine = 0;
        chunks.length = 0;
      };
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (deferred || size > MAX_REPORT_BYTES) return release();
        if (heldBytes + c.length > MAX_HELD_BYTES) {
          deferred = true;
          return release();
        }
        chunks.push(c);
        mine += c.length;
        heldBytes += c.length;
      });
      stream.once('error', release);
      stream.on('end', () => {
        if (stream.sizeExceeded || size > MAX_REPORT_BYTES) {
          release();
          return cb(smtpError(552, '5.3.4 report too large'));
        }
        if (deferred) {
          release();
          deps.log.warn({ event: 'mx.deferred', held: heldBytes }, 'inbound report deferred: too many held at once');
          return cb(smtpError(452, '4.3.1 too many reports in progress, try again later'));
        }
        const roles = sessionRoles.get(session) ?? [];
        sessionRoles.delete(session);
        const message = Buffer.concat(chunks);
        chunks.length = 0;
        // The budget stays taken while the report is parsed: the parse holds it (and more).
        handle(deps, secret, message, roles)
          .finally(release)
          .then((what) => {
            deps.log.info({ event: 'mx.received', what }, `inbound report: ${what}`);
            cb(null, '2.0.0 Ok: report received');
          })
          .catch((err: unknown) => {
            if ((err as { permanent?: boolean }).permanent) {
              deps.log.info({ event: 'mx.refused', reason: (err as Error).message }, 'inbound report refused');
              return cb(smtpError(554, '5.6.0 the message cannot be parsed'));
            }
            deps.log.error({ event: 'mx.error', err }, 'inbound report not processed');
            cb(smtpError(451, '4.3.0 temporary failure, try again later'));
          });
      });
    },
  });
}

export async function startMx(deps: MxDeps): Promise<Listener[]> {
  return [await listenSmtp(createServer(deps), { name: 'mx', port: deps.config.mxPort, host: deps.config.host, log: deps.log, errorEvent: 'mx.connection_error' })];
}
