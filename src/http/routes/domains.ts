/** GET /v1/domains, /v1/domains/{id}, /v1/domains/{domain_name}/status, POST /v1/domains/{id}/validate. */
import { Api, collection, intParam, pageOf } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { listDomains, presentDomain, presentDomainPage, requireDomain, requireDomainByName } from '../../domains/domains';
import { validateDomain } from '../../domains/verify';

export function domainRoutes(api: Api, { db, config }: HttpDeps): void {
  api.add({ method: 'get', path: '/v1/domains', summary: 'List domains', tag: 'Domains', scope: 'domains:read', query: 'DomainsQuery',
    response: { status: 200, schema: 'Domain', list: true } }, (ctx, p) => {
    const q = validateQuery<{ page?: number; page_size?: number; domain?: string; is_verified?: boolean }>('DomainsQuery', ctx.query);
    ctx.body = collection(presentDomainPage(listDomains(db, p.instance.id, q, pageOf(q)), config.hostname));
  });

  api.add({ method: 'get', path: '/v1/domains/:id', summary: 'Domain detail', tag: 'Domains', scope: 'domains:read', params: { id: 'integer' },
    response: { status: 200, schema: 'Domain' }, errors: ['domain_not_found', 'validation_error'] }, (ctx, p) => {
    ctx.body = presentDomain(requireDomain(db, p.instance.id, intParam(ctx, 'id')), config.hostname);
  });

  api.add({ method: 'get', path: '/v1/domains/:domain_name/status', summary: 'Light status of a domain by name', tag: 'Domains', scope: 'domains:read',
    params: { domain_name: 'string' }, response: { status: 200, schema: 'DomainStatus' }, errors: ['domain_not_found'] }, (ctx, p) => {
    const d = presentDomain(requireDomainByName(db, p.instance.id, ctx.params.domain_name), config.hostname);
    ctx.body = { id: d.id, domain: d.domain, is_verified: d.is_verified };
  });

  // Takes no body (any body is ignored): the DNS at this moment is the only input.
  api.add({ method: 'post', path: '/v1/domains/:id/validate', summary: 'Verify the domain DNS records now', tag: 'Domains', scope: 'domains:write',
    params: { id: 'integer' }, response: { status: 200, schema: 'Domain' }, errors: ['domain_not_found', 'validation_error', 'service_unavailable'] }, async (ctx, p) => {
    const d = await validateDomain(db, p.instance.id, intParam(ctx, 'id'), { hostname: config.hostname, dnsServers: config.dnsServers });
    ctx.body = presentDomain(d, config.hostname);
  });
}
