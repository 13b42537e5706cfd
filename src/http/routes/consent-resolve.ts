/** GET /v1/consent-rules/resolve: the consent that applies now, and the verdict a send would apply. */
import { Api } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { resolveConsent } from '../../consent/resolve';
import type { Channel, ContactType } from '../../store/consent';

interface ResolveQuery { contacts: string[]; contact_types: ContactType[]; channel?: Channel; purpose_id?: number; purpose?: string }

/** A repeated parameter is taken value by value; a single one may be a comma list. */
function listParam(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value;
  return value.split(',');
}

export function consentResolveRoutes(api: Api, { db }: HttpDeps): void {
  api.add({ method: 'get', path: '/v1/consent-rules/resolve', summary: 'Resolve the consent that applies now', tag: 'Consent', scope: 'consent:read',
    query: 'ConsentResolveQuery', response: { status: 200, schema: 'ConsentResolution' }, errors: ['consent_contact_pairs_mismatch', 'consent_purpose_not_found'] }, (ctx, p) => {
    const raw: Record<string, unknown> = { ...ctx.query, contacts: listParam(ctx.query.contacts), contact_types: listParam(ctx.query.contact_types) };
    for (const k of ['contacts', 'contact_types']) if (raw[k] === undefined) delete raw[k];
    const q = validateQuery<ResolveQuery>('ConsentResolveQuery', raw);
    ctx.body = resolveConsent(db, p.instance.id, {
      contacts: q.contacts, contactTypes: q.contact_types, channel: q.channel, purposeId: q.purpose_id, purposeCode: q.purpose,
    }, Date.now());
  });
}
