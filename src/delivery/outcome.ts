/**
 * Outcomes of a delivery attempt as data (Postfix smtp_trouble.c, as types), and the pure
 * classification of an SMTP client result into one. Nothing here touches the store or a socket.
 */

/** whole destination (try the next MX) | this message | one recipient. */
export type Scope = 'site' | 'message' | 'recipient';

export type Outcome =
  | { kind: 'sent'; response: string; detail?: string }
  | { kind: 'deferred'; scope: Scope; response: string; detail?: string }
  /** `tried: false`: decided without a connection (the queue age ran out while the mail waited). */
  | { kind: 'bounced'; scope: Scope; response: string; detail?: string; restrict: boolean; tried?: false }
  /** Decided before any connection: suppression, functional attachment limit. */
  | { kind: 'dropped'; detail: string; uncharge?: boolean };

export function classifyReply(code: number, response: string, scope: Scope): Outcome {
  if (code >= 200 && code < 300) return { kind: 'sent', response };
  if (code >= 500 && code < 600) return { kind: 'bounced', scope, response, restrict: true };
  return { kind: 'deferred', scope, response }; // 4xx, and anything unexpected: try again later
}

/** The fields nodemailer puts on its errors (smtp-connection): protocol data, not text to parse. */
export interface SmtpClientError { code?: string; responseCode?: number; response?: string; command?: string; message: string }

export function isSmtpClientError(err: unknown): err is SmtpClientError {
  return err instanceof Error;
}

const sessionCommands = new Set(['CONN', 'EHLO', 'HELO', 'LHLO', 'STARTTLS']);

/**
 * A thrown client error: with a reply code it is the server's verdict; without one the connection
 * failed (refused, timed out, TLS, DNS of the host): the site is unreachable, try the next host.
 */
export function classifyError(err: unknown): Outcome {
  if (!isSmtpClientError(err)) return { kind: 'deferred', scope: 'site', response: String(err) };
  const code = err.responseCode;
  const response = (err.response ?? err.message).trim();
  if (code === undefined || !Number.isFinite(code)) {
    return { kind: 'deferred', scope: 'site', response: `${err.code ?? 'ERROR'}: ${err.message}` };
  }
  // AUTH refused by the relay is our configuration, never the recipient's fault.
  if (err.code === 'EAUTH') return { kind: 'deferred', scope: 'site', response };
  // A host that refuses the session itself (greeting, EHLO/HELO, STARTTLS), even with a 5xx, is
  // skipped for the next MX, as Postfix's smtp_skip_5xx_greeting does: it said nothing of the
  // recipient, so it neither bounces the mail nor restricts the address.
  if (err.command !== undefined && sessionCommands.has(err.command.toUpperCase())) return { kind: 'deferred', scope: 'site', response };
  // "Authentication required" to MAIL FROM is a relay we were not configured to log in to: our
  // configuration again, retried like EAUTH. Any other 5xx there is a permanent failure like one
  // to RCPT or DATA: CONTRACT §5 bounces the mail and restricts the address for every one.
  if (err.command !== undefined && /^MAIL\b/i.test(err.command)) {
    if (code === 530 || /^5\d\d[ -]5\.7\.0\b/.test(response) || /authentication required/i.test(response)) return { kind: 'deferred', scope: 'site', response };
    if (code >= 500 && code < 600) return { kind: 'bounced', scope: 'message', response, restrict: true };
  }
  const scope: Scope = err.code === 'EENVELOPE' ? 'recipient' : err.code === 'EPROTOCOL' ? 'site' : 'message';
  return classifyReply(code, response, scope);
}

/** Status numbers of the spec (Mail delivery status). */
export const STATUS = { queued: 2, sent: 3, dropped: 4, deferred: 5, bounced: 6 } as const;
