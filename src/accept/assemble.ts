/**
 * Assembles the RFC 5322 message once, at acceptance (nodemailer MailComposer): Message-ID at
 * the service's hostname and Date are set here. Bcc recipients are envelope only, never a header.
 * An SMTP submission keeps the client's bytes; only a missing Message-ID or Date is prepended.
 * Building the MIME is pure CPU, so it runs on the worker pool (lib/worker-pool.ts).
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import { encodeWord } from 'nodemailer/lib/mime-funcs';
import type Mail from 'nodemailer/lib/mailer';
import { mimeBytes } from './mime-bytes';
import './mime-header-keys';
import { headerEnd } from '../lib/header-section';
import { asBuffer, defineTask, type WorkerPool } from '../lib/worker-pool';
import { randomHex } from '../lib/tokens';
import type { Attachment, Recipient } from './types';
import type { NormalizedSubmission } from './validate';

export interface Envelope { msgId: string; hostname: string; at: number; senderName: string }

/** Everything the MIME is built from: plain data, so it can cross to a worker thread. */
export interface MessageParts {
  from: Mail.Address; to: Mail.Address[]; cc: Mail.Address[]; replyTo: Mail.Address | null;
  subject: string; html: string | null; text: string | null; headers: Record<string, string>;
  attachments: Attachment[]; messageId: string; at: number;
}

const address = (r: Recipient): Mail.Address => ({ address: r.email, name: r.name ?? '' });

/** RFC 5322 §2.1.1: lines SHOULD stay within 78 characters; folding can only break at whitespace. */
const lineLimit = 78;

/** Text a reader would take for an RFC 2047 encoded word: sent as is, it would decode to something else. */
export const encodedWordLike = /=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=/;

/**
 * Headers nodemailer writes as they are (message ids, RFC 5322 §3.6.4, and structured fields):
 * an encoded word there would be read as literal text, so they are never encoded (validate.ts
 * holds them to printable ASCII).
 */
export const unencodedHeaders = new Set(['in-reply-to', 'references', 'content-id', 'otp-token']);

/**
 * Spec, POST /v1/mails/send rule 3: "A long header value is folded and, if it cannot be folded,
 * encoded per RFC 2047." nodemailer folds custom values at their spaces (and encodes non-ASCII
 * ones); a word too long for any line (a bare URL, a token) is given as RFC 2047 encoded words
 * instead, which fold between them and decode back to the value. So is a value holding text
 * that looks like an encoded word, which would otherwise decode to something else. Threading
 * ids are never encoded: a long one stays on its own line (up to 998 bytes).
 */
export function foldableValue(name: string, value: string): string {
  if (unencodedHeaders.has(name.toLowerCase())) return value;
  const tooLong = value.split(/[ \t]+/).some((word, i) => (i === 0 ? name.length + 2 : 1) + word.length > lineLimit);
  return tooLong || encodedWordLike.test(value) ? encodeWord(value, 'B', 52) : value;
}

const foldableHeaders = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, foldableValue(name, value)]));

export const messageIdOf = (e: Envelope): string => `<${e.msgId}@${e.hostname}>`;

/** The worker task: attachment contents arrive as Uint8Arrays when the parts crossed a thread. */
export function buildMessage(p: MessageParts): Promise<Buffer> {
  const composer = new MailComposer({
    from: p.from,
    to: p.to,
    cc: p.cc.length ? p.cc : undefined,
    replyTo: p.replyTo ?? undefined,
    subject: encodedWordLike.test(p.subject) ? encodeWord(p.subject, 'B', 52) : p.subject,
    html: p.html ?? undefined,
    text: p.text ?? undefined,
    headers: foldableHeaders(p.headers),
    // Every file the client sent is an attachment: nodemailer would show a message/* one inline.
    attachments: p.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, contentDisposition: 'attachment' as const, content: asBuffer(a.content) })),
    messageId: p.messageId,
    date: new Date(p.at),
    // Left to nodemailer, every message costs a crypto.randomBytes(8) call (~10% of a small
    // message's build); the pooled CSPRNG of lib/tokens.ts gives the same 8 random bytes.
    baseBoundary: randomHex(8),
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const root = composer.compile();
  keepNameCase(root, Object.keys(p.headers));
  const bytes = mimeBytes(root);
  return bytes ? Promise.resolve(bytes) : root.build();
}

/**
 * nodemailer capitalizes header names its own way (X-API-ID becomes X-Api-ID): a custom header
 * leaves with its name as the client wrote it. Names compare case-insensitively, but a consumer
 * of the raw bytes sees them as they are. (`_headers`: MimeNode's header list, public at runtime.)
 */
function keepNameCase(root: unknown, names: string[]): void {
  const byLower = new Map(names.map((n) => [n.toLowerCase(), n]));
  for (const h of (root as { _headers?: { key: string }[] })._headers ?? []) h.key = byLower.get(h.key.toLowerCase()) ?? h.key;
}

const buildTask = defineTask<MessageParts, Uint8Array>(__filename, 'buildMessage');

export async function assemble(sub: NormalizedSubmission, e: Envelope, workers: WorkerPool): Promise<Buffer> {
  if (sub.raw) return completeRaw(sub.raw, e);
  const parts: MessageParts = {
    from: { address: sub.senderEmail, name: e.senderName },
    to: sub.to.map(address),
    cc: sub.cc.map(address),
    replyTo: sub.replyTo ? address(sub.replyTo) : null,
    subject: sub.subject ?? '',
    html: sub.html,
    text: sub.text,
    headers: sub.headers,
    attachments: sub.attachments,
    messageId: messageIdOf(e),
    at: e.at,
  };
  return asBuffer(await workers.run(buildTask, parts));
}

function completeRaw(raw: Buffer, e: Envelope): Buffer {
  const head = raw.subarray(0, headerEnd(raw)).toString('latin1');
  const add: string[] = [];
  if (!/^message-id:/im.test(head)) add.push(`Message-ID: ${messageIdOf(e)}`);
  if (!/^date:/im.test(head)) add.push(`Date: ${new Date(e.at).toUTCString().replace('GMT', '+0000')}`);
  return add.length ? Buffer.concat([Buffer.from(add.join('\r\n') + '\r\n'), raw]) : raw;
}
