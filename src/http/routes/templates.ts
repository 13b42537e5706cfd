/** GET /v1/mail-templates (no html or config, page_size 10 by default) and /{template_id}. */
import { Api, collection, intParam, pageOf } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { listTemplates, presentTemplate, requireTemplate } from '../../templates/templates';
import type { TemplateFilter } from '../../store/templates';

type TemplatesQuery = TemplateFilter & { page?: number; page_size?: number };

export function templateRoutes(api: Api, { db }: HttpDeps): void {
  api.add({ method: 'get', path: '/v1/mail-templates', summary: 'List mail templates (without html and config)', tag: 'Templates', scope: 'templates:read',
    query: 'MailTemplatesQuery', pageSize: 10, response: { status: 200, schema: 'MailTemplateSummary', list: true } }, (ctx, p) => {
    const q = validateQuery<TemplatesQuery>('MailTemplatesQuery', ctx.query);
    ctx.body = collection(listTemplates(db, p.instance.id, q, pageOf(q, 10)));
  });

  api.add({ method: 'get', path: '/v1/mail-templates/:template_id', summary: 'Mail template detail (with html and config)', tag: 'Templates', scope: 'templates:read',
    params: { template_id: 'integer' }, response: { status: 200, schema: 'MailTemplate' }, errors: ['mail_template_not_found', 'validation_error'] }, (ctx, p) => {
    ctx.body = presentTemplate(requireTemplate(db, p.instance.id, intParam(ctx, 'template_id')));
  });
}
