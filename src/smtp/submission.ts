/**
 * SMTP submission door (CONTRACT §4): smtp-server hooks → the one accept path. This door only
 * authenticates, enforces the session limits (recipients, size), parses the message and maps
 * its X-Svc-* headers; every sending rule lives in accept. Replies are built by reply.ts.
 */
import { type SMTPServerDataStream, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { MailParser, simpleParser, type ParsedMail } from 'mailparser';
import { Headers } from '@zone-eu/mailsplit';
import type { Db } from '../store/db';
import type { Config } from '../config/load';
import type { Logger } from '../lib/log';
import type { Metrics } from '../lib/metrics';
import type { Accept, Submission } from '../accept/types';
import { limits } from '../accept/validate';
import { authenticate, authorize, type Principal } from '../auth/api-keys';
import { ServiceError, validationError } from '../errors';
import { replies, smtpError } from './reply';
import { decodeEncodedWords, fieldCounts, fieldValues, headerSection, isPrivateHeader, stripHeaderFields } from './raw-headers';
import { cutSpaceRuns, toCrlf } from '../lib/header-section';
import { loadTlsCredentials, type TlsCredentials } from './tls';
import { CompletingServer, listenSmtp, type Listener } from './listen';

export interface SubmissionDeps { db: Db; config: Readonly<Config>; log: Logger; accept: Accept; metrics?: Pick<Metrics, 'refusedSends'> }

/** Spec, Limits (one source with the accept path): 15 MB = 15728640 bytes, 50 recipients. */
const MAX_MESSAGE_BYTES = limits.messageBytes;
const MAX_RECIPIENTS = limits.recipients;
/** RCPT commands accepted per transaction: smtp-server starts a new envelope object at MAIL, RSET and after DATA. */
const rcptCommands = new WeakMap<object, number>();

/** What AUTH established. The key itself is kept to re-check it for every message (CLI changes apply at once). */
class SubmissionUser {
  constructor(readonly slug: string, readonly apiKey: string) {}
}

/** AUTH user = instance slug, password = an API key with mail:send (or access all). */
function checkCredentials(db: Db, slug: string, apiKey: string, remoteIp: string): Principal {
  const principal = authenticate(db, `Bearer ${apiKey}`, slug);
  authorize(principal, 'mail:send', remoteIp);
  return principal;
}

/** An address holding U+FFFD: the client's bytes were not UTF-8 (see onRcptTo). */
const undecodable = (address: string): boolean => address.includes('\uFFFD');
/**
 * RFC 6531 §3.4: an address with UTF-8 is used only in a transaction whose MAIL declared
 * SMTPUTF8 (nodemailer and Python's smtplib add it themselves); Postfix answers the others
 * 553 5.6.7, and so does this door.
 */
const undeclaredUtf8 = (address: string, mail: { args?: false | Record<string, unknown> } | false): boolean =>
  /[^\x00-\x7f]/.test(address) && !(mail && mail.args && mail.args.SMTPUTF8);

/** Buffers the DATA stream up to the limit; past it, keeps counting and drops the bytes (null). */
function readMessage(stream: SMTPServerDataStream, max: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) chunks.length = 0;
      else chunks.push(chunk);
    });
    stream.once('error', reject);
    stream.once('end', () => resolve(size > max || stream.sizeExceeded ? null : Buffer.concat(chunks, size)));
  });
}

/** The decoded text of a header mailparser leaves unstructured (X-Svc-*), trimmed; null when absent. */
function headerText(parsed: SubmittedHead, name: string): string | null {
  const v = parsed.headers.get(name);
  const text = Array.isArray(v) ? v.find((x): x is string => typeof x === 'string') : v;
  if (typeof text !== 'string') return null;
  const decoded = decodeEncodedWords(text).trim();
  return decoded === '' ? null : decoded;
}

const parseOptions = { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true };

/**
 * A message whose top node is one text/plain or text/html part with no disposition holds no
 * attachment by mailparser's own rule (createNode: a text type without an attachment
 * disposition), so its body need not be decoded at all: its header section alone gives
 * mailparser every field the door reads. Saves most of the parse for the common single-part
 * message (profile of `npm run bench`). The gate reads the raw fields, as mailsplit does when it
 * decides a node's type (the first field, undecoded, a type guessed from a file name), and is
 * narrower than that rule: at most one Content-Type, none naming a file, no Content-Disposition
 * at all. Anything else is parsed whole, which is always exact.
 */
function plainTextHead(section: Buffer): boolean {
  if (fieldValues(section, 'content-disposition').length > 0) return false;
  const types = fieldValues(section, 'content-type');
  if (types.length === 0) return true; // text/plain by default (RFC 2045 §5.2)
  if (types.length > 1 || /\bname\*?\s*=/i.test(types[0])) return false;
  const type = types[0].split(';')[0].trim().toLowerCase();
  return type === 'text/plain' || type === 'text/html';
}

/** What the door reads of a message: mailparser's headers (From and Subject among them). */
export type SubmittedHead = Pick<ParsedMail, 'headers' | 'from' | 'subject'>;

/**
 * mailparser's own reading of a header section, without its streams: the same header splitter
 * (mailsplit's Headers, which MailParser's MIME nodes use) and the same decoding
 * (MailParser#processHeaders: encoded words, addresses, one value for single fields), as
 * simpleParser assigns them. The stream pipeline simpleParser sets up per message (a Transform,
 * a splitter, a passthrough, their events) cost ~60 µs of the ~70 µs a header-only parse took,
 * about a seventh of the door's CPU per message (profile of `npm run bench`). processHeaders is
 * not in mailparser's typings, and it does not touch the parser's stream state, so one parser
 * serves every message; test/unit/smtp/parse-submitted.test.ts holds it equal to simpleParser.
 */
const headerReader = new MailParser() as MailParser & { processHeaders(lines: unknown): ParsedMail['headers'] };
function readHead(section: Buffer): SubmittedHead {
  const headers = headerReader.processHeaders(new Headers(section).getList());
  const from = headers.get('from') as ParsedMail['from'];
  const subject = headers.get('subject');
  return { headers, from, subject: typeof subject === 'string' ? subject : undefined };
}

/** mailsplit's limit on a header section (MAX_HEAD_SIZE): a longer one is left to the whole parse, which refuses it. */
const maxHeadBytes = 1024 * 1024;

/** mailparser's reading of the message: its headers, and the decoded weight of its attachments. */
export async function parseSubmitted(raw: Buffer): Promise<{ parsed: SubmittedHead; attachmentBytes: number; attachmentCount: number }> {
  const section = headerSection(raw);
  if (section.length <= maxHeadBytes && plainTextHead(section)) return { parsed: readHead(section), attachmentBytes: 0, attachmentCount: 0 };
  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(cutSpaceRuns(raw, section.length), parseOptions);
  } catch (err) {
    // The parser's own limits (a part's header section over 1 MB, over 1,000 parts): the
    // content is refused for good (554 5.6.0), not a temporary failure the client would retry.
    throw validationError([{ pointer: '', code: 'value_error.mime', message: `the message cannot be parsed: ${(err as Error).message}` }], 'The message structure cannot be parsed.');
  }
  return { parsed, attachmentBytes: parsed.attachments.reduce((sum, a) => sum + a.size, 0), attachmentCount: parsed.attachments.length };
}

/**
 * The MAIL parameters of the extensions EHLO lists (SIZE, 8BITMIME, SMTPUTF8, and AUTH's own,
 * RFC 4954 §5); RCPT takes none. smtp-server also reads DSN's (RET, ENVID, NOTIFY, ORCPT) though
 * DSN is not offered: a client asking NOTIFY=NEVER would believe it honoured. RFC 5321
 * §4.1.1.11: a parameter the server does not implement is 555.
 */
const mailParameters = ['SIZE', 'BODY', 'SMTPUTF8', 'AUTH'];
function unknownParameter(address: { args: false | Record<string, unknown> }, known: string[]): string | null {
  return address.args ? (Object.keys(address.args).find((k) => !known.includes(k)) ?? null) : null;
}

/** Fields RFC 5322 §3.6 allows at most once, besides From and Subject (checked with their rules); Bcc is removed anyway. */
const singleFields = ['Date', 'Message-ID', 'To', 'Cc', 'Reply-To', 'Sender', 'In-Reply-To', 'References'];

/** Turns the client's bytes into a Submission (From, Subject, X-Svc-* fields); accept applies the rules. */
async function toSubmission(raw: Buffer, envelopeTo: string[]): Promise<Submission> {
  const { parsed, attachmentBytes, attachmentCount } = await parseSubmitted(raw);
  const entries = parsed.from?.value ?? [];
  const from = entries[0]?.address;
  if (entries.length === 0 || (entries.length === 1 && !from && !entries[0].group)) {
    throw validationError([{ pointer: '/sender_email', code: 'missing', message: 'the message has no From header' }], 'The message has no From header.');
  }
  // The From header is the registered sender the rules are checked against (CONTRACT §4): a
  // second From field, a second mailbox or a group (whose members a filter on addresses would
  // skip) would put an unchecked author before the recipient.
  const counts = fieldCounts(headerSection(raw));
  if (!from || entries.length > 1 || (counts.get('from') ?? 0) > 1) {
    throw validationError([{ pointer: '/sender_email', code: 'value_error.from', message: 'the From header must be one field naming one mailbox, a registered sender' }], 'The message must have one From header naming one mailbox.');
  }
  // Lengths of the subject and of the X-Svc-* values are rules of the accept path (both doors).
  // RFC 5322 §3.6 allows one Subject field: with two, the rule would measure one (mailparser
  // keeps the last) while the recipient reads both, so a long one would pass unmeasured.
  if ((counts.get('subject') ?? 0) > 1) {
    throw validationError([{ pointer: '/subject', code: 'value_error.subject', message: 'the message must have at most one Subject field' }], 'The message must have at most one Subject header.');
  }
  // The other fields RFC 5322 §3.6 allows once: a message with two Dates or Message-IDs is one
  // large receivers refuse outright, after it was acknowledged here (and it would be delivered as
  // it is: only missing ones are added).
  const repeated = singleFields.find((f) => (counts.get(f.toLowerCase()) ?? 0) > 1);
  if (repeated) {
    throw validationError([{ pointer: '', code: 'value_error.header', message: `the message must have at most one ${repeated} field (RFC 5322 §3.6)` }], `The message must have at most one ${repeated} header.`);
  }
  const subject = parsed.subject ?? null;
  return {
    door: 'smtp',
    senderEmail: from,
    to: envelopeTo.map((email) => ({ email })),
    cc: [],
    bcc: [],
    // Reply-To, Cc and every other header stay in `raw`, as the client wrote them; the client's
    // bytes are the content, so no decoded html or text is carried.
    replyTo: null,
    templateId: null,
    subject,
    html: null,
    text: null,
    headers: {},
    attachments: [],
    category: headerText(parsed, 'x-svc-category'),
    testMode: (headerText(parsed, 'x-svc-test-mode') ?? '').toLowerCase() === 'true',
    customMsgId: headerText(parsed, 'x-svc-custom-msg-id'),
    customGroupCode: headerText(parsed, 'x-svc-group-code'),
    raw: stripHeaderFields(raw, isPrivateHeader),
    rawAttachmentBytes: attachmentBytes,
    rawAttachmentCount: attachmentCount,
  };
}

function createServer(deps: SubmissionDeps, name: string, secure: boolean, tls: TlsCredentials): CompletingServer {
  const { db, config, log, accept } = deps;
  const insecureAuth = config.smtpAllowInsecureAuth;
  // Translates a failure for the wire; an unexpected one is logged here, once.
  const fail = (err: unknown, session: SMTPServerSession): Error => {
    const { reply, unexpected } = smtpError(err);
    if (unexpected) log.error({ event: 'submission.error', listener: name, session: session.id, err }, 'unexpected error in an SMTP transaction');
    return reply;
  };
  const options: SMTPServerOptions = {
    secure,
    key: tls.key,
    cert: tls.cert,
    name: config.hostname,
    banner: 'Estafeta submission',
    size: MAX_MESSAGE_BYTES,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: insecureAuth,
    authRequiredMessage: replies.authRequired().message,
    // Our replies carry their enhanced codes in the text (reply.ts); smtp-server would derive
    // others from the number alone and double them, so the capability stays hidden.
    hideENHANCEDSTATUSCODES: true,
    hideDSN: true,
    hideREQUIRETLS: true,
    // Throughput (DESIGN.md): no PTR lookup before the greeting. smtp-server 3.21 has no option
    // for its fixed 100 ms early-talker pause; it costs once per connection, not per message.
    disableReverseLookup: true,
    logger: false,
    closeTimeout: config.shutdownTimeout * 1000,
    onConnect(session, callback) {
      // AUTH is not even advertised before TLS (CONTRACT §4); onSecure lifts this.
      session.disabledCommands = session.secure || insecureAuth ? [] : ['AUTH'];
      callback();
    },
    onSecure(_socket, session, callback) {
      session.disabledCommands = [];
      callback();
    },
    onAuth(auth, session, callback) {
      const slug = auth.username ?? '';
      const apiKey = auth.password ?? '';
      try {
        // RFC 4616: an authorization identity other than the authenticated one asks to act as
        // someone else, which no key may do (an empty authcid is a client that put the user there).
        if (auth.authzid && auth.authcid && auth.authzid !== auth.authcid) throw new ServiceError('unauthorized', 'Authentication credentials invalid.');
        checkCredentials(db, slug, apiKey, session.remoteAddress);
        callback(null, { user: new SubmissionUser(slug, apiKey) });
      } catch (err) {
        callback(fail(err, session));
      }
    },
    onMailFrom(address, session, callback) {
      // smtp-server answers 530 itself only while AUTH is enabled for the session.
      if (!(session.user instanceof SubmissionUser)) return callback(replies.authRequired());
      // A key revoked, an instance disabled or an allow list changed since AUTH: the session's
      // credentials fail now (CONTRACT §6: 535 5.7.8), before the client sends recipients and a
      // whole message for nothing. DATA checks again, for a change in between.
      try {
        checkCredentials(db, session.user.slug, session.user.apiKey, session.remoteAddress);
      } catch (err) {
        return callback(fail(err, session));
      }
      const unknown = unknownParameter(address, mailParameters);
      if (unknown) return callback(replies.unknownParameter(unknown));
      if (undecodable(address.address)) return callback(replies.badAddress());
      callback(undeclaredUtf8(address.address, address) ? replies.smtputf8Required() : null);
    },
    onRcptTo(address, session, callback) {
      // Bytes that are not UTF-8 reach us as U+FFFD: accepted, the mail would go to an address
      // the client never wrote (RFC 6531 §3.3: an SMTPUTF8 address is valid UTF-8).
      if (undecodable(address.address)) return callback(replies.badAddress());
      const unknown = unknownParameter(address, []);
      if (unknown) return callback(replies.unknownParameter(unknown));
      if (undeclaredUtf8(address.address, session.envelope.mailFrom)) return callback(replies.smtputf8Required());
      const rcpts = session.envelope.rcptTo;
      const again = rcpts.find((r) => r.address.toLowerCase() === address.address.toLowerCase());
      // smtp-server merges a repeated recipient (any case) by replacing the first with the new
      // one; the HTTP door keeps the first spelling of a duplicate, and both doors must store the
      // same mails (CONTRACT §4): the replacement takes the first spelling.
      if (again) address.address = again.address;
      // The limit counts RCPT commands, repeats included, as Postfix's smtpd_recipient_limit
      // does and as the HTTP door counts to + cc + bcc entries: 51 recipients, even twice the
      // same, are refused at both doors (the repeats are merged into one mail afterwards).
      const accepted = rcptCommands.get(session.envelope) ?? 0;
      if (accepted >= MAX_RECIPIENTS) return callback(replies.tooManyRecipients(MAX_RECIPIENTS));
      rcptCommands.set(session.envelope, accepted + 1);
      callback(null);
    },
    onData(stream, session, callback) {
      const user = session.user instanceof SubmissionUser ? session.user : null;
      const envelopeTo = session.envelope.rcptTo.map((r) => r.address);
      readMessage(stream, MAX_MESSAGE_BYTES)
        .then(async (raw) => {
          if (!user) throw replies.authRequired();
          if (raw === null) return callback(replies.tooLarge(MAX_MESSAGE_BYTES));
          // The key, instance and allow lists are read again for every message.
          const { instance } = checkCredentials(db, user.slug, user.apiKey, session.remoteAddress);
          // Line ends first: every check below must read the lines the recipient will get. The
          // limit holds for those bytes too (bare LFs made CRLF grow the message).
          const lines = toCrlf(raw);
          if (lines.length > MAX_MESSAGE_BYTES) return callback(replies.tooLarge(MAX_MESSAGE_BYTES));
          const result = await accept.submit(instance, await toSubmission(lines, envelopeTo));
          log.debug({ event: 'submission.accepted', listener: name, instance: instance.slug, msg_id: result.msgId }, 'message accepted');
          callback(null, `2.0.0 Ok: queued as ${result.msgId}`);
        })
        .catch((err: unknown) => {
          // The client went away mid-DATA: nothing was acknowledged or stored, nothing to alarm about.
          if ((err as { code?: unknown } | null)?.code === 'ECONNECTION') {
            log.info({ event: 'submission.aborted', listener: name, session: session.id }, 'client disconnected before the end of the message');
            return callback(err as Error);
          }
          if (err instanceof ServiceError) deps.metrics?.refusedSends.inc({ door: 'smtp', code: err.code });
          callback(err instanceof Error && 'responseCode' in err ? err : fail(err, session));
        });
    },
  };
  return new CompletingServer(options);
}

const listen = (deps: SubmissionDeps, name: string, port: number, secure: boolean, tls: TlsCredentials): Promise<Listener> =>
  listenSmtp(createServer(deps, name, secure, tls), { name, port, host: deps.config.host, log: deps.log, errorEvent: 'submission.connection_error' });

export async function startSubmission(deps: SubmissionDeps): Promise<Listener[]> {
  const tls = await loadTlsCredentials(deps.config);
  if (tls.source === 'generated') deps.log.info({ event: 'tls.generated', dir: `${deps.config.dataDir}/tls` }, 'generated a self-signed certificate for SMTP');
  const listeners = [await listen(deps, 'smtp', deps.config.smtpPort, false, tls)];
  if (deps.config.smtpsPort !== null) listeners.push(await listen(deps, 'smtps', deps.config.smtpsPort, true, tls));
  return listeners;
}
