/**
 * The contract rules of a send that JSON Schema cannot say (spec, POST /v1/mails/send and
 * Limits): template exclusivity, recipient count, addresses, headers, sizes in bytes, base64,
 * category slug. Every failure is one 422 item whose pointer names the JSON field, for both doors.
 */
import { pointerToken, validationError, type FieldError } from '../errors';
import { normalizeEmail } from '../lib/address';
import type { Attachment, Recipient, Submission } from './types';
import { unencodedHeaders } from './assemble';

const MB = 1024 * 1024;
export const limits = {
  subjectChars: 254,
  recipients: 50,
  contentBytes: 5 * MB,
  attachments: 20,
  attachmentBytes: 10 * MB,
  messageBytes: 15 * MB,
  headers: 15,
} as const;

/** Structure and platform headers (spec rule 2), lowercased → the JSON field to use instead. */
const reservedHeaders: Record<string, string> = {
  to: 'use the "to" field', from: 'use "sender_email"', cc: 'use the "cc" field', bcc: 'use the "bcc" field',
  subject: 'use the "subject" field', 'reply-to': 'use the "reply_to" field',
  'content-type': 'use "html", "text" and "attachments"', 'content-transfer-encoding': 'use "html", "text" and "attachments"',
  'content-disposition': 'use "attachments"', 'mime-version': 'the platform writes it; no field is needed',
  'message-id': 'use "custom_msg_id" to label the send; threading uses In-Reply-To and References',
  date: 'the platform writes it at acceptance; no field is needed',
  'return-path': 'the platform writes it at delivery; no field is needed', received: 'the platform writes it at delivery; no field is needed',
  'dkim-signature': 'the platform signs at delivery; no field is needed',
  'list-unsubscribe': 'the platform adds it at delivery; no field is needed', 'list-unsubscribe-post': 'the platform adds it at delivery; no field is needed',
  'bounce-to': 'the platform writes it at delivery; no field is needed', sender: 'use "sender_email"',
  'x-mailer': 'the platform writes it; no field is needed', priority: 'the platform manages it; no field is needed',
};
const svcPrefixHint = 'the x-svc- prefix is reserved; use "category", "custom_msg_id", "custom_group_code" or "test_mode"';

export interface NormalizedSubmission extends Submission {
  /** Every recipient, canonical and deduplicated per kind, in order to, cc, bcc. */
  recipients: { email: string; kind: 'to' | 'cc' | 'bcc' }[];
  categorySlug: string | null;
  attachmentBytes: number;
  attachmentCount: number;
}

/** Length in characters (code points), as JSON Schema's maxLength counts: an emoji is one, not two UTF-16 units. */
export const chars = (s: string): number => [...s].length;

/**
 * Accents folded, lowercased, any other run of characters than letters and digits → '-'; null
 * when nothing is left. Letters of every script count ("Новости" is a category, "--- !!" is not).
 */
export function categorySlug(input: string): string | null {
  const slug = input.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-+|-+$/g, '');
  return slug === '' ? null : slug;
}

function checkAddresses(list: Recipient[], field: string, errors: FieldError[]): Recipient[] {
  return list.map((r, i) => {
    const email = normalizeEmail(r.email);
    if (!email) errors.push({ pointer: `/${field}/${i}/email`, code: 'value_error.email', message: 'value is not a valid email address' });
    return { email: email ?? r.email, name: r.name ?? null };
  });
}

function checkHeaders(headers: Record<string, string>, errors: FieldError[]): void {
  const names = Object.keys(headers);
  if (names.length > limits.headers) {
    errors.push({ pointer: '/headers', code: 'too_long', message: `At most ${limits.headers} custom headers`, params: { max_length: limits.headers } });
  }
  const seen = new Set<string>();
  for (const name of names) {
    const pointer = `/headers/${pointerToken(name)}`;
    const value = headers[name];
    const valueLength = chars(value);
    const lower = name.toLowerCase();
    const again = seen.has(lower);
    seen.add(lower);
    if (!/^[\x21-\x39\x3b-\x7e]{1,126}$/.test(name)) {
      errors.push({ pointer, code: 'value_error.header_name', message: 'A header name is 1-126 printable ASCII characters without ":"' });
    } else if (Object.hasOwn(reservedHeaders, lower)) {
      errors.push({ pointer, code: 'value_error.reserved_header', message: `Header ${name} cannot be set: ${reservedHeaders[lower]}` });
    } else if (lower.startsWith('x-svc-')) {
      errors.push({ pointer, code: 'value_error.reserved_header', message: `Header ${name} cannot be set: ${svcPrefixHint}` });
    } else if (value.trim() === '') {
      // RFC 5322 allows an empty unstructured field, but no MIME builder writes one: accepted, it
      // would silently vanish from the delivered message ("custom headers included").
      errors.push({ pointer, code: 'string_too_short', message: `Header ${name} needs a value; leave the header out instead of sending it empty`, params: { min_length: 1 } });
    } else if (valueLength > 995) {
      errors.push({ pointer, code: 'string_too_long', message: 'A header value is at most 995 characters', params: { max_length: 995 } });
    } else if (name.length + valueLength > 996) {
      errors.push({ pointer, code: 'string_too_long', message: 'A header\'s name plus value is at most 996 characters', params: { max_length: 996 } });
    } else if (/[\r\n\0]/.test(value)) {
      errors.push({ pointer, code: 'value_error.header_value', message: 'A header value cannot contain line breaks' });
    } else if (unencodedHeaders.has(lower) && /[^\t\x20-\x7e]/.test(value)) {
      // Written as they are (assemble.ts): a non-ASCII character or U+2028 would reach the
      // recipient as raw 8-bit bytes in a header of a 7-bit message.
      errors.push({ pointer, code: 'value_error.header_value', message: `Header ${name} holds message ids or a structured value, written as they are (never RFC 2047-encoded): printable ASCII only` });
    } else if (again) {
      // Header names are case-insensitive (RFC 5322): X-A and x-a would be one header written twice.
      errors.push({ pointer, code: 'value_error.duplicate_header', message: `Header ${name} is given twice (names are case-insensitive)` });
    }
  }
}

function checkContent(sub: Submission, errors: FieldError[]): void {
  const content = [['subject', sub.subject], ['html', sub.html], ['text', sub.text]] as const;
  if (sub.raw) {
    if (sub.subject !== null && chars(sub.subject) > limits.subjectChars) {
      errors.push({ pointer: '/subject', code: 'string_too_long', message: `The subject is at most ${limits.subjectChars} characters`, params: { max_length: limits.subjectChars } });
    }
    return;
  }
  if (sub.templateId !== null) {
    for (const [field, value] of content) {
      if (value !== null) errors.push({ pointer: `/${field}`, code: 'value_error.template_content', message: `Do not send "${field}" with "template_id": the template supplies the content; remove "${field}" or "template_id"` });
    }
    return;
  }
  if (sub.subject === null) errors.push({ pointer: '/subject', code: 'missing', message: 'Field required without "template_id"' });
  if (sub.html === null) errors.push({ pointer: '/html', code: 'missing', message: 'Field required without "template_id"' });
  if (sub.subject !== null && chars(sub.subject) > limits.subjectChars) {
    errors.push({ pointer: '/subject', code: 'string_too_long', message: `The subject is at most ${limits.subjectChars} characters`, params: { max_length: limits.subjectChars } });
  }
  for (const field of ['html', 'text'] as const) {
    const value = sub[field];
    if (value !== null && Buffer.byteLength(value, 'utf8') > limits.contentBytes) {
      errors.push({ pointer: `/${field}`, code: 'string_too_long', message: `"${field}" is at most ${limits.contentBytes} bytes in UTF-8`, params: { max_bytes: limits.contentBytes } });
    }
  }
}

function checkAttachments(list: Attachment[], errors: FieldError[]): number {
  const total = list.reduce((n, a) => n + a.content.length, 0);
  if (list.length > limits.attachments) {
    errors.push({ pointer: '/attachments', code: 'too_long', message: `At most ${limits.attachments} attachments`, params: { max_length: limits.attachments } });
  } else if (total > limits.attachmentBytes) {
    errors.push({ pointer: '/attachments', code: 'value_error.attachments_too_heavy', message: `Attachments weigh at most ${limits.attachmentBytes} bytes decoded in total`, params: { max_bytes: limits.attachmentBytes } });
  }
  return total;
}

/** Applies every contract rule of a send; throws one 422 listing every failing field. */
export function checkSubmission(sub: Submission): NormalizedSubmission {
  const errors: FieldError[] = [];
  const sender = normalizeEmail(sub.senderEmail);
  if (!sender) errors.push({ pointer: '/sender_email', code: 'value_error.email', message: 'value is not a valid email address' });
  const to = checkAddresses(sub.to, 'to', errors);
  const cc = checkAddresses(sub.cc, 'cc', errors);
  const bcc = checkAddresses(sub.bcc, 'bcc', errors);
  let replyTo: Recipient | null = null;
  if (sub.replyTo) {
    const email = normalizeEmail(sub.replyTo.email);
    if (!email) errors.push({ pointer: '/reply_to/email', code: 'value_error.email', message: 'value is not a valid email address' });
    replyTo = { email: email ?? sub.replyTo.email, name: sub.replyTo.name ?? null };
  }
  if (to.length === 0) errors.push({ pointer: '/to', code: 'too_short', message: 'At least one recipient', params: { min_length: 1 } });
  if (to.length + cc.length + bcc.length > limits.recipients) {
    errors.push({ pointer: '/to', code: 'too_long', message: `At most ${limits.recipients} recipients in to, cc and bcc together; split the send into several calls`, params: { max_length: limits.recipients } });
  }
  checkContent(sub, errors);
  if (!sub.raw) checkHeaders(sub.headers, errors);
  const attachmentBytes = sub.raw ? sub.rawAttachmentBytes ?? 0 : checkAttachments(sub.attachments, errors);
  const attachmentCount = sub.raw ? sub.rawAttachmentCount ?? 0 : sub.attachments.length;
  let slug: string | null = null;
  if (sub.category !== null) {
    slug = categorySlug(sub.category);
    if (chars(sub.category) > 255) errors.push({ pointer: '/category', code: 'string_too_long', message: 'The category is at most 255 characters', params: { max_length: 255 } });
    else if (!slug) errors.push({ pointer: '/category', code: 'value_error.category', message: 'The category needs at least one letter or digit' });
  }
  for (const [field, value] of [['custom_msg_id', sub.customMsgId], ['custom_group_code', sub.customGroupCode]] as const) {
    if (value !== null && chars(value) > 254) errors.push({ pointer: `/${field}`, code: 'string_too_long', message: `"${field}" is at most 254 characters`, params: { max_length: 254 } });
  }
  if (errors.length > 0) throw validationError(errors);

  const recipients: NormalizedSubmission['recipients'] = [];
  const seen = new Set<string>();
  for (const [kind, list] of [['to', to], ['cc', cc], ['bcc', bcc]] as const) {
    for (const r of list) {
      // One mail per mailbox: a duplicate would deliver twice. Compared without case, as
      // smtp-server merges envelope recipients, so both doors store the same mails.
      const key = r.email.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      recipients.push({ email: r.email, kind });
    }
  }
  return { ...sub, senderEmail: sender ?? sub.senderEmail, to, cc, bcc, replyTo, recipients, categorySlug: slug, attachmentBytes, attachmentCount };
}
