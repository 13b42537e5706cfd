/**
 * POST /v1/mails/send (JSON, gzip or multipart → the one accept path), GET /v1/mails,
 * GET /v1/activities/sent, GET /v1/mails/{mail_id} and its logs.
 */
import type Koa from 'koa';
import { Api, collection, pageOf, type Ctx } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { mapPage } from '../../store/page';
import { readRequestBody } from '../middleware/json-body';
import { parseSendForm, parseSendRequest } from '../../accept/request';
import type { Submission } from '../../accept/types';
import { ServiceError } from '../../errors';
import { listMailPage, mailLogPage, presentMail, requireMail, type MailsQuery } from '../../accept/reports';

async function submissionOf(ctx: Ctx): Promise<Submission> {
  const parsed = await readRequestBody(ctx as unknown as Koa.Context, { multipart: true });
  return parsed.multipart ? parseSendForm(parsed.fields, parsed.files) : parseSendRequest(parsed.body);
}

export function mailRoutes(api: Api, { db, accept, refusedSends }: HttpDeps): void {
  api.add({ method: 'post', path: '/v1/mails/send', summary: 'Queue an email', tag: 'Mails', scope: 'mail:send', body: 'SendRequest', multipart: true,
    response: { status: 200, schema: 'SendResponse' },
    errors: ['malformed_request', 'plan_send_limit_exceeded', 'subscription_inactive', 'sender_not_found', 'mail_template_not_found',
      'sandbox_relay_restricted', 'domain_sender_not_verified', 'template_not_public', 'request_too_large', 'unsupported_media_type',
      'validation_error', 'rate_limit_exceeded', 'service_unavailable'] }, async (ctx, p) => {
    try {
      const { msgId } = await accept.submit(p.instance, await submissionOf(ctx));
      ctx.status = 200;
      ctx.body = { message_id: msgId };
    } catch (err) {
      if (err instanceof ServiceError) refusedSends?.inc({ door: 'http', code: err.code });
      throw err;
    }
  });

  const list = (queryId: string) => (ctx: Ctx, p: { instance: Parameters<typeof listMailPage>[1] }): void => {
    const q = validateQuery<MailsQuery & { page?: number; page_size?: number }>(queryId, ctx.query);
    ctx.body = collection(mapPage(listMailPage(db, p.instance, q, pageOf(q)), presentMail));
  };
  api.add({ method: 'get', path: '/v1/mails', summary: 'List mails (one record per recipient)', tag: 'Mails', scope: 'mail:read', query: 'MailsQuery',
    response: { status: 200, schema: 'Mail', list: true }, errors: ['malformed_request'] }, list('MailsQuery'));
  api.add({ method: 'get', path: '/v1/activities/sent', summary: 'Sent activity (same query as GET /v1/mails, plus recipient_operator)', tag: 'Mails',
    scope: 'mail:read', query: 'ActivitiesSentQuery', response: { status: 200, schema: 'Mail', list: true }, errors: ['malformed_request'] }, list('ActivitiesSentQuery'));

  api.add({ method: 'get', path: '/v1/mails/:mail_id', summary: 'Mail detail', tag: 'Mails', scope: 'mail:read', params: { mail_id: 'string' },
    response: { status: 200, schema: 'Mail' }, errors: ['mail_not_found', 'mail_outside_retention'] }, (ctx, p) => {
    ctx.body = presentMail(requireMail(db, p.instance.id, ctx.params.mail_id));
  });

  api.add({ method: 'get', path: '/v1/mails/:mail_id/logs', summary: 'Delivery log of a mail, oldest first', tag: 'Mails', scope: 'mail:read',
    params: { mail_id: 'string' }, query: 'PageQuery', response: { status: 200, schema: 'MailLog', list: true },
    errors: ['mail_not_found', 'mail_outside_retention', 'malformed_request'] }, (ctx, p) => {
    const q = validateQuery<{ page?: number; page_size?: number }>('PageQuery', ctx.query);
    ctx.body = collection(mailLogPage(db, p.instance.id, ctx.params.mail_id, pageOf(q, 20)));
  });
}
