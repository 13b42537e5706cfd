/**
 * The error catalog: every expected failure has a stable code (the spec's), and this table says
 * how each door speaks it: HTTP status + title for problem+json, the SMTP reply for submission.
 * http/middleware/problem.ts and smtp/reply.ts are the only translators.
 */

interface CatalogRow { status: number; title: string; smtp: string }

export const catalog = {
  malformed_request: { status: 400, title: 'Malformed request', smtp: '501 5.5.4' },
  unauthorized: { status: 401, title: 'Unauthorized', smtp: '535 5.7.8' },
  plan_send_limit_exceeded: { status: 402, title: 'Plan send limit exceeded', smtp: '550 5.7.0' },
  plan_custom_domains_limit_exceeded: { status: 402, title: 'Plan custom domains limit exceeded', smtp: '550 5.7.0' },
  plan_senders_limit_exceeded: { status: 402, title: 'Plan senders limit exceeded', smtp: '550 5.7.0' },
  plan_api_access_control_unavailable: { status: 402, title: 'API access control unavailable on this plan', smtp: '550 5.7.0' },
  subscription_inactive: { status: 402, title: 'Subscription inactive', smtp: '550 5.7.0' },
  forbidden: { status: 403, title: 'Forbidden', smtp: '535 5.7.8' },
  ip_not_allowed: { status: 403, title: 'IP address not allowed', smtp: '535 5.7.8' },
  not_found: { status: 404, title: 'Not found', smtp: '550 5.1.1' },
  instance_not_found: { status: 404, title: 'Instance not found', smtp: '535 5.7.8' },
  api_key_not_found: { status: 404, title: 'API key not found', smtp: '535 5.7.8' },
  domain_not_found: { status: 404, title: 'Domain not found', smtp: '550 5.7.1' },
  sender_not_found: { status: 404, title: 'Sender not found', smtp: '550 5.7.1' },
  mail_template_not_found: { status: 404, title: 'Mail template not found', smtp: '550 5.7.1' },
  mail_not_found: { status: 404, title: 'Mail not found', smtp: '550 5.1.1' },
  link_not_found: { status: 404, title: 'Link not found', smtp: '550 5.1.1' },
  mail_outside_retention: { status: 404, title: 'Mail outside retention', smtp: '550 5.1.1' },
  form_not_found: { status: 404, title: 'Form not found', smtp: '550 5.1.1' },
  field_not_found: { status: 404, title: 'Field not found', smtp: '550 5.1.1' },
  consent_term_not_found: { status: 404, title: 'Consent term not found', smtp: '550 5.1.1' },
  consent_purpose_not_found: { status: 404, title: 'Consent purpose not found', smtp: '550 5.1.1' },
  consent_event_not_found: { status: 404, title: 'Consent event not found', smtp: '550 5.1.1' },
  suppression_not_found: { status: 404, title: 'Suppression not found', smtp: '550 5.1.1' },
  method_not_allowed: { status: 405, title: 'Method not allowed', smtp: '502 5.5.1' },
  domain_sender_not_verified: { status: 409, title: 'Sender domain not verified', smtp: '550 5.7.1' },
  template_not_public: { status: 409, title: 'Template not public', smtp: '550 5.7.1' },
  sandbox_relay_restricted: { status: 409, title: 'Sandbox relay restricted', smtp: '550 5.7.1' },
  consent_term_inactive: { status: 409, title: 'Consent term inactive', smtp: '550 5.7.1' },
  consent_term_no_current_version: { status: 409, title: 'Consent term has no current version', smtp: '550 5.7.1' },
  consent_contact_type_channel_mismatch: { status: 409, title: 'Contact type does not fit the channel', smtp: '550 5.7.1' },
  consent_duplicate_rule: { status: 409, title: 'Duplicate consent rule', smtp: '550 5.7.1' },
  consent_contact_pairs_mismatch: { status: 409, title: 'Contact lists do not pair', smtp: '550 5.7.1' },
  domain_already_exists: { status: 409, title: 'Domain already exists', smtp: '550 5.7.1' },
  domain_not_verified: { status: 409, title: 'Domain not verified', smtp: '550 5.7.1' },
  domain_is_sandbox: { status: 409, title: 'Domain is the sandbox domain', smtp: '550 5.7.1' },
  template_content_required: { status: 409, title: 'Template content required', smtp: '550 5.7.1' },
  consent_term_missing_channels_or_purposes: { status: 409, title: 'Term needs channels and purposes', smtp: '550 5.7.1' },
  sender_already_exists: { status: 409, title: 'Sender already exists', smtp: '550 5.7.1' },
  api_key_scope_required: { status: 409, title: 'API key scope required', smtp: '550 5.7.1' },
  instance_already_exists: { status: 409, title: 'Instance already exists', smtp: '550 5.7.1' },
  field_key_already_exists: { status: 409, title: 'Field key already exists', smtp: '550 5.7.1' },
  field_key_reserved: { status: 409, title: 'Field key reserved', smtp: '550 5.7.1' },
  field_is_system: { status: 409, title: 'Field is a system field', smtp: '550 5.7.1' },
  purpose_already_exists: { status: 409, title: 'Purpose already exists', smtp: '550 5.7.1' },
  consent_channel_not_covered: { status: 409, title: 'Consent channel not covered', smtp: '550 5.7.1' },
  request_too_large: { status: 413, title: 'Request too large', smtp: '552 5.3.4' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', smtp: '554 5.6.0' },
  validation_error: { status: 422, title: 'Validation failed', smtp: '554 5.6.0' },
  rate_limit_exceeded: { status: 429, title: 'Rate limit exceeded', smtp: '451 4.7.0' },
  internal_error: { status: 500, title: 'Internal server error', smtp: '451 4.3.0' },
  service_unavailable: { status: 503, title: 'Service unavailable', smtp: '451 4.3.0' },
} as const satisfies Record<string, CatalogRow>;

export type ErrorCode = keyof typeof catalog;

/** A key as one JSON Pointer reference token (RFC 6901 §3). */
export const pointerToken = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** One per-field item of a 422 (spec, "422 per-field errors"). */
export interface FieldError {
  pointer: string;
  code: string;
  message: string;
  params?: Record<string, unknown>;
}

export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extras: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ServiceError';
  }
}

export const isErrorCode = (code: string): code is ErrorCode => Object.prototype.hasOwnProperty.call(catalog, code);

/** A 422 with its errors[] (one item per failing field). */
export function validationError(errors: FieldError[], detail = 'The request does not satisfy the schema.'): ServiceError {
  return new ServiceError('validation_error', detail, { errors });
}

/** Errors from libraries (koa-body, http-errors) arrive with a status; give them a catalog code. */
const byStatus: Record<number, ErrorCode> = {
  400: 'malformed_request',
  405: 'method_not_allowed',
  413: 'request_too_large',
  415: 'unsupported_media_type',
};

export function asServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; httpCode?: unknown } | null;
  const status = Number(e?.status ?? e?.statusCode ?? e?.httpCode);
  const code = byStatus[status];
  if (code) return new ServiceError(code, generic[code] ?? catalog[code].title);
  return new ServiceError('internal_error', 'Internal server error.');
}

/** The generic details the spec requires (401, 403, 500 say nothing specific). */
export const generic: Partial<Record<ErrorCode, string>> = {
  unauthorized: 'Authentication required: a valid API key and instance slug.',
  forbidden: 'The credentials do not allow this operation.',
  ip_not_allowed: 'The source address is not allowed for these credentials.',
  internal_error: 'Internal server error.',
  malformed_request: 'The request is malformed.',
  request_too_large: 'The request is too large.',
  unsupported_media_type: 'Content-Type must be application/json.',
};
