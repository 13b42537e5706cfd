/** GET /v1/consent-terms and /v1/consent-purposes: the consent catalog, read only (the CLI writes it). */
import { Api, collection, pageOf } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { listPurposes, listTerms } from '../../consent/catalog';

export function consentCatalogRoutes(api: Api, { db }: HttpDeps): void {
  api.add({ method: 'get', path: '/v1/consent-terms', summary: 'List consent terms with their versions', tag: 'Consent', scope: 'consent:read',
    query: 'PageQuery', response: { status: 200, schema: 'ConsentTerm', list: true } }, (ctx, p) => {
    const q = validateQuery<{ page?: number; page_size?: number }>('PageQuery', ctx.query);
    ctx.body = collection(listTerms(db, p.instance.id, pageOf(q)));
  });

  api.add({ method: 'get', path: '/v1/consent-purposes', summary: 'List consent purposes', tag: 'Consent', scope: 'consent:read',
    query: 'ConsentPurposesQuery', response: { status: 200, schema: 'ConsentPurpose', list: true } }, (ctx, p) => {
    // is_enabled is serialized as 0/1, so the filter takes 1/0 as well as true/false.
    const raw = { ...ctx.query };
    if (raw.is_enabled === '1' || raw.is_enabled === '0') raw.is_enabled = raw.is_enabled === '1' ? 'true' : 'false';
    const q = validateQuery<{ page?: number; page_size?: number; is_enabled?: boolean }>('ConsentPurposesQuery', raw);
    ctx.body = collection(listPurposes(db, p.instance.id, { isEnabled: q.is_enabled }, pageOf(q)));
  });
}
