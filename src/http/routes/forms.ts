/** GET /v1/forms (filter kind) and /v1/forms/{id}, each form with its resolved items. */
import { Api, collection, intParam, pageOf } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { listForms, requireForm } from '../../forms/forms';
import type { FormKind } from '../../store/forms';

export function formRoutes(api: Api, { db }: HttpDeps): void {
  api.add({ method: 'get', path: '/v1/forms', summary: 'List forms with their items', tag: 'Forms', scope: 'form:read', query: 'FormsQuery',
    response: { status: 200, schema: 'Form', list: true } }, (ctx, p) => {
    const q = validateQuery<{ page?: number; page_size?: number; kind?: FormKind }>('FormsQuery', ctx.query);
    ctx.body = collection(listForms(db, p.instance.id, q, pageOf(q)));
  });

  api.add({ method: 'get', path: '/v1/forms/:id', summary: 'Form detail with its items', tag: 'Forms', scope: 'form:read', params: { id: 'integer' },
    response: { status: 200, schema: 'Form' }, errors: ['form_not_found', 'validation_error'] }, (ctx, p) => {
    ctx.body = requireForm(db, p.instance.id, intParam(ctx, 'id'));
  });
}
