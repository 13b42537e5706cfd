/**
 * The JSON send request (schema/requests/send-request.json) → a Submission. Owns what is
 * specific to the JSON shape: schema validation and strict base64 decoding of attachments.
 * The contract rules shared with SMTP live in validate.ts.
 */
import { pointerToken, ServiceError, validationError, type FieldError } from '../errors';
import { bodyErrors, boundedBody, schemaDocs } from '../lib/schemas';
import type { Attachment, Recipient, Submission } from './types';
import { chars, checkSubmission } from './validate';
import { encodedWordLike } from './assemble';
import { toCrlf } from '../lib/header-section';
import { jsonNesting } from '../lib/json';

interface Address { email: string; name?: string | null }
export interface SendRequest {
  sender_email: string;
  to: Address[];
  cc?: Address[] | null;
  bcc?: Address[] | null;
  reply_to?: Address | null;
  template_id?: number | null;
  subject?: string | null;
  html?: string | null;
  text?: string | null;
  headers?: Record<string, string> | null;
  attachments?: { type: string; content: string; filename: string }[] | null;
  category?: string | null;
  test_mode?: boolean;
  custom_msg_id?: string | null;
  custom_group_code?: string | null;
}

// A multipart file part's type and filename obey the JSON attachment's schema patterns.
const attachmentFields = (schemaDocs.find((d) => d.$id === 'SendAttachment') as unknown as { properties: Record<string, { pattern: string }> }).properties;
const mimeType = new RegExp(attachmentFields.type.pattern, 'u');
const fileName = new RegExp(attachmentFields.filename.pattern, 'u');

/**
 * RFC 4648 §4 with padding, no whitespace or line breaks ("strict"), canonical (a decode and
 * re-encode gives the same text). No grouped regex: it would recurse on megabytes of text.
 */
function decodeStrictBase64(text: string): Buffer | null {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}

/**
 * A message/* attachment travels unencoded (RFC 2046 §5.2.1: 7bit or 8bit, never base64), as the
 * message it is: its line ends are made CRLF, and one holding a NUL or a line over 998 bytes
 * (RFC 5322 §2.1.1) cannot be carried so: a 422 naming it, instead of a copy the recipient gets
 * altered. Other attachments pass unchanged (they are base64-encoded).
 */
function asMessageAttachment(a: Attachment, i: number, errors: FieldError[]): Attachment | null {
  // nodemailer writes a short ASCII filename as a quoted string, and mail readers decode an
  // encoded word there (RFC 2047 §5 forbids one, they do it anyway): "=?utf-8?Q?a=0D=0A?="
  // would reach the recipient as another name, control characters included.
  const pointer = `/attachments/${i}/filename`;
  if (encodedWordLike.test(a.filename)) {
    if (!errors.some((e) => e.pointer === pointer)) errors.push({ pointer, code: 'value_error.filename', message: 'A filename cannot hold RFC 2047 encoded-word syntax (=?charset?Q|B?text?=): mail readers would decode it to another name' });
    return null;
  }
  if (!a.contentType.startsWith('message/')) return a;
  const content = toCrlf(a.content);
  let line = 0;
  for (const byte of content) {
    line = byte === 0x0a ? 0 : byte === 0x0d ? line : line + 1;
    if (byte === 0 || line > 998) {
      errors.push({ pointer: `/attachments/${i}/content`, code: 'value_error.message', message: 'A message/* attachment is sent unencoded (RFC 2046): it must be a message, without NUL bytes or lines over 998 bytes' });
      return null;
    }
  }
  return { ...a, content };
}

const recipients = (list: Address[] | null | undefined): Recipient[] => (list ?? []).map((a) => ({ email: a.email, name: a.name ?? null }));

/**
 * Validates a parsed body; `files` are the binary parts of a multipart request (already read),
 * which join the JSON attachments.
 */
export function parseSendRequest(input: unknown, files: Attachment[] = []): Submission {
  const body = boundedBody(input, 'SendRequest');
  const errors = bodyErrors('SendRequest', body);
  if (errors.length > 0 && !isObject(body)) throw validationError(errors);
  const req = (errors.length > 0 ? wellTyped(body as Record<string, unknown>, errors) : body) as SendRequest;
  const attachments: Attachment[] = [];
  (req.attachments ?? []).forEach((a, i) => {
    const content = decodeStrictBase64(a.content);
    if (!content) {
      errors.push({ pointer: `/attachments/${i}/content`, code: 'value_error.base64', message: 'content must be strict base64 (RFC 4648, padded, no line breaks)' });
      return;
    }
    const message = asMessageAttachment({ filename: a.filename, contentType: a.type.toLowerCase(), content }, i, errors);
    if (message) attachments.push(message);
  });
  const submission: Submission = {
    door: 'http',
    senderEmail: req.sender_email,
    to: recipients(req.to),
    cc: recipients(req.cc),
    bcc: recipients(req.bcc),
    replyTo: req.reply_to ? { email: req.reply_to.email, name: req.reply_to.name ?? null } : null,
    templateId: req.template_id ?? null,
    subject: req.subject ?? null,
    html: req.html ?? null,
    text: req.text ?? null,
    headers: req.headers ?? {},
    attachments: [...attachments, ...files],
    category: req.category ?? null,
    testMode: req.test_mode ?? false,
    customMsgId: req.custom_msg_id ?? null,
    customGroupCode: req.custom_group_code ?? null,
  };
  if (errors.length > 0) throw validationError(withRuleErrors(errors, submission));
  return submission;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Spec, 422: "one item per failing field". A body the schema refuses still has its other fields
 * checked by the contract rules (validate.ts, which accept runs on a valid body), so a client
 * learns every failing field at once; a field already reported is not reported twice.
 */
function withRuleErrors(errors: FieldError[], submission: Submission): FieldError[] {
  let rules: FieldError[] = [];
  try {
    checkSubmission(submission);
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'validation_error') rules = (err.extras.errors as FieldError[] | undefined) ?? [];
  }
  const reported = new Set(errors.map((e) => e.pointer));
  return [...errors, ...rules.filter((e) => !reported.has(e.pointer))];
}

/**
 * The body with every field the schema refused made harmless for the rules: left out, or, where
 * leaving it out would change another rule's verdict, a valid stand-in. In a recipient, reply_to
 * or attachment only the refused members stand in (and unknown ones go), so its other members are
 * still checked: {"email": "bad", "name": 5} reports both. A refused item as a whole (not an
 * object) stands in as a distinct valid one (the counts still count it); a refused template_id
 * as some id (the content rules apply as the client meant them).
 */
function wellTyped(body: Record<string, unknown>, errors: FieldError[]): Record<string, unknown> {
  // Every pointer that fails, and each of its ancestors, in a set: one lookup per field, so a
  // body of 60,000 bad recipients costs 60,000 lookups, not 60,000 scans of 60,000 errors.
  const failingPrefixes = new Set<string>();
  for (const e of errors) {
    for (let at = e.pointer; at !== ''; at = at.slice(0, at.lastIndexOf('/'))) failingPrefixes.add(at);
  }
  const failing = (pointer: string): boolean => failingPrefixes.has(pointer);
  const repaired = (pointer: string, item: unknown, standIn: Record<string, unknown>): unknown => {
    if (!failing(pointer)) return item;
    if (!isObject(item)) return standIn;
    return Object.fromEntries(Object.entries(standIn).map(([k, v]) => [k, failing(`${pointer}/${k}`) || !Object.hasOwn(item, k) ? v : item[k]]));
  };
  const list = (key: string, value: unknown, standIn: (i: number) => Record<string, unknown>): unknown[] =>
    (Array.isArray(value) ? value.map((item, i) => repaired(`/${key}/${i}`, item, standIn(i))) : []);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!failing(`/${key}`)) {
      out[key] = value;
    } else if (key === 'to' || key === 'cc' || key === 'bcc') {
      out[key] = list(key, value, (i) => ({ email: `stand-in-${key}-${i}@example.invalid`, name: null }));
    } else if (key === 'attachments') {
      out[key] = list(key, value, () => ({ type: 'application/octet-stream', content: '', filename: 'stand-in' }));
    } else if (key === 'reply_to') {
      if (isObject(value)) out[key] = repaired('/reply_to', value, { email: 'stand-in@example.invalid', name: null });
    } else if (key === 'headers') {
      out[key] = isObject(value) ? Object.fromEntries(Object.entries(value).filter(([name, v]) => typeof v === 'string' && !failing(`/headers/${pointerToken(name)}`))) : {};
    } else if (key === 'template_id') {
      out[key] = -1;
    } else if (key === 'sender_email') {
      out[key] = 'stand-in@example.invalid';
    }
  }
  // A required field left out stands in too, or the rules would never run on such a body and
  // its other failing fields (subject, html) would go unreported.
  if (!Object.hasOwn(out, 'sender_email')) out.sender_email = 'stand-in@example.invalid';
  if (!Object.hasOwn(out, 'to')) out.to = [];
  return out;
}

const jsonFields = new Set(['to', 'cc', 'bcc', 'reply_to', 'headers', 'attachments']);
export const multipartFileMaxBytes = 10 * 1024 * 1024;

export interface FormFile { name: string; filename: string; contentType: string; content: Buffer }

/**
 * multipart/form-data → Submission: array and object fields arrive as JSON strings, attachments
 * as binary file parts named `attachments` (a text part of that name is a 422, a file over
 * 10 MB a 413).
 */
export function parseSendForm(fields: Record<string, string>, files: FormFile[]): Submission {
  const errors: FieldError[] = [];
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'attachments') {
      errors.push({ pointer: '/attachments', code: 'value_error.multipart', message: 'attachments must be sent as file parts (with a filename), not as a text field' });
    } else if (jsonFields.has(name)) {
      try {
        if (jsonNesting(value) !== 'shallow') throw new Error('too deep or broken'); // JSON.parse would build it all first
        body[name] = JSON.parse(value);
      } catch {
        errors.push({ pointer: `/${name}`, code: 'json_invalid', message: `"${name}" must be a JSON string in a multipart request` });
      }
    } else if (name === 'template_id' && /^-?\d{1,15}$/.test(value)) body[name] = Number(value);
    else if (name === 'test_mode' && /^(true|false)$/.test(value)) body[name] = value === 'true';
    else body[name] = value;
  }
  const attachments: Attachment[] = [];
  files.forEach((f, i) => {
    const type = f.contentType.split(';')[0].trim();
    if (f.name !== 'attachments') {
      errors.push({ pointer: `/${f.name}`, code: 'value_error.multipart', message: 'only attachments may be sent as file parts' });
    } else if (f.content.length > multipartFileMaxBytes) {
      throw new ServiceError('request_too_large', `Attachment ${f.filename} is ${f.content.length} bytes; each file is at most ${multipartFileMaxBytes}.`, { max_bytes: multipartFileMaxBytes });
    } else if (f.filename === '') {
      errors.push({ pointer: `/attachments/${i}/filename`, code: 'string_too_short', message: 'A file part needs a filename', params: { min_length: 1 } });
    } else if (chars(f.filename) > 255) {
      errors.push({ pointer: `/attachments/${i}/filename`, code: 'string_too_long', message: 'A filename is at most 255 characters', params: { max_length: 255 } });
    } else if (!fileName.test(f.filename)) {
      errors.push({ pointer: `/attachments/${i}/filename`, code: 'string_pattern_mismatch', message: 'A filename is a file name: not blank, no path, no control characters', params: { pattern: fileName.source } });
    } else if (f.content.length === 0) {
      // As in JSON, where an empty content is string_too_short: a file of no bytes is no attachment.
      errors.push({ pointer: `/attachments/${i}/content`, code: 'string_too_short', message: 'A file part needs content', params: { min_length: 1 } });
    } else if (!mimeType.test(type)) {
      errors.push({ pointer: `/attachments/${i}/type`, code: 'string_pattern_mismatch', message: 'The part Content-Type must be type/subtype' });
    } else {
      const file = asMessageAttachment({ filename: f.filename, contentType: type.toLowerCase(), content: f.content }, i, errors);
      if (file) attachments.push(file);
    }
  });
  if (errors.length > 0) throw validationError(errors);
  return parseSendRequest(body, attachments);
}
