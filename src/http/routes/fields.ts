/** GET /v1/fields: the field catalog, filtered by is_active. */
import { Api, collection, pageOf } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { listFields } from '../../fields/fields';

export function fieldRoutes(api: Api, { db }: HttpDeps): void {
  api.add({ method: 'get', path: '/v1/fields', summary: 'Field catalog', tag: 'Fields', scope: 'field:read', query: 'FieldsQuery',
    response: { status: 200, schema: 'Field', list: true } }, (ctx, p) => {
    const q = validateQuery<{ page?: number; page_size?: number; is_active?: boolean }>('FieldsQuery', ctx.query);
    ctx.body = collection(listFields(db, p.instance.id, q, pageOf(q)));
  });
}
