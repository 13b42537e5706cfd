/**
 * ServiceError → SMTP reply (CONTRACT §6): the number and enhanced code come from the catalog's
 * `smtp` column, the text starts with the enhanced code and then the spec's `code`. smtp-server
 * runs with ENHANCEDSTATUSCODES hidden, so it adds nothing to ours and nothing is doubled.
 */
import { asServiceError, catalog, ServiceError } from '../errors';

export interface SmtpReplyError extends Error { responseCode: number }

/** One reply: `<number> <enhanced> <code> <text>` once smtp-server prefixes the number. */
export function smtpReply(responseCode: number, enhanced: string, code: string, text: string): SmtpReplyError {
  // A reply is one line: control characters from details (header values quoted back) are blanked.
  const line = `${enhanced} ${code} ${text}`.replace(/[\x00-\x1f\x7f]+/g, ' ');
  return Object.assign(new Error(line), { responseCode });
}

/** The first per-field error says more than the generic 422 detail; it names the field. */
function describe(e: ServiceError): string {
  const errors = e.extras.errors;
  const first: unknown = Array.isArray(errors) ? errors[0] : undefined;
  if (typeof first === 'object' && first !== null && 'message' in first && typeof first.message === 'string') {
    const pointer = 'pointer' in first && typeof first.pointer === 'string' ? first.pointer : '';
    return `${e.detail} ${pointer}: ${first.message}`;
  }
  return e.detail;
}

/**
 * Translates any error for the wire. Expected failures keep their catalog code; anything else
 * becomes `451 4.3.0 internal_error` and `unexpected` is true so the caller logs it once.
 */
export function smtpError(err: unknown): { reply: SmtpReplyError; unexpected: boolean } {
  const e = asServiceError(err);
  const [num, enhanced] = catalog[e.code].smtp.split(' ');
  const unexpected = !(err instanceof ServiceError) || e.code === 'internal_error';
  return { reply: smtpReply(Number(num), enhanced, e.code, describe(e)), unexpected };
}

/**
 * smtp-server's own replies (syntax, sequence, timeouts, a declared SIZE over the limit) come
 * without an enhanced code; this completes them from the reply number, as RFC 3463 classes them.
 */
const libraryCodes: Record<number, string> = {
  421: '4.3.2', 451: '4.3.0', 452: '4.5.3', 500: '5.5.2', 501: '5.5.4', 502: '5.5.1', 503: '5.5.1',
  504: '5.5.4', 530: '5.7.0', 535: '5.7.8', 538: '5.7.0', 550: '5.7.1', 554: '5.6.0',
};

export function completeReply(code: number, text: string): string {
  if (code < 400 || /^[45]\.\d{1,3}\.\d{1,3}( |$)/.test(text)) return text;
  const plain = text.replace(/^Error: /, '');
  // The library's only 552 is the size limit (a declared SIZE too large): say it as ours.
  if (code === 552) return `5.3.4 request_too_large ${plain}`;
  return `${libraryCodes[code] ?? `${Math.floor(code / 100)}.0.0`} ${plain}`;
}

/** Replies of the session itself (not produced by the accept path). */
export const replies = {
  authRequired: () => smtpReply(530, '5.7.0', 'unauthorized', 'Authentication required: AUTH with the instance slug and an API key first.'),
  tooManyRecipients: (max: number) => smtpReply(452, '4.5.3', 'validation_error', `Too many recipients: at most ${max} per message.`),
  badAddress: () => smtpReply(553, '5.1.3', 'validation_error', 'The address is not valid UTF-8.'),
  smtputf8Required: () => smtpReply(553, '5.6.7', 'validation_error', 'An address with UTF-8 needs SMTPUTF8 declared on MAIL FROM (RFC 6531).'),
  unknownParameter: (name: string) => smtpReply(555, '5.5.4', 'validation_error', `Parameter ${name} is not supported here.`),
  tooLarge: (max: number) => smtpReply(552, '5.3.4', 'request_too_large', `Message exceeds the maximum size of ${max} bytes.`),
};
