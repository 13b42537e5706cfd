/** GET /v1/mail-restrictions, /v1/mail-unsubscribes, /v1/mail-complaints: list (partial recipient) and get. */
import { Api, collection, intParam, pageOf } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { listSuppressions, requireSuppression, type SuppressionList } from '../../suppressions/suppressions';

const paths: Array<[string, SuppressionList, string]> = [
  ['/v1/mail-restrictions', 'restrictions', 'restrictions (hard bounces)'],
  ['/v1/mail-unsubscribes', 'unsubscribes', 'unsubscribes'],
  ['/v1/mail-complaints', 'complaints', 'complaints'],
];

export function suppressionRoutes(api: Api, { db }: HttpDeps): void {
  for (const [path, list, what] of paths) {
    api.add({ method: 'get', path, summary: `List ${what}`, tag: 'Suppressions', scope: 'mail:read', query: 'SuppressionsQuery',
      response: { status: 200, schema: 'Suppression', list: true } }, (ctx, p) => {
      const q = validateQuery<{ page?: number; page_size?: number; recipient?: string }>('SuppressionsQuery', ctx.query);
      ctx.body = collection(listSuppressions(db, p.instance.id, list, q, pageOf(q)));
    });

    api.add({ method: 'get', path: `${path}/:id`, summary: `One record of ${what}`, tag: 'Suppressions', scope: 'mail:read', params: { id: 'integer' },
      response: { status: 200, schema: 'Suppression' }, errors: ['suppression_not_found', 'validation_error'] }, (ctx, p) => {
      ctx.body = requireSuppression(db, p.instance.id, list, intParam(ctx, 'id'));
    });
  }
}
