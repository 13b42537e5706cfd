/** POST /v1/consent-events (register a consent), GET /v1/consent-events and /v1/consent-events/{id} (history). */
import { Api, collection, intParam, pageOf } from '../api';
import type { HttpDeps } from '../deps';
import { jsonBody } from '../middleware/json-body';
import { validateBody, validateQuery } from '../../lib/schemas';
import { getEvent, listEvents, registerEvent, type EventInput } from '../../consent/events';

type EventsQuery = { page?: number; page_size?: number; term_id?: number; status?: string; contact?: string };

export function consentEventRoutes(api: Api, { db }: HttpDeps): void {
  api.add({ method: 'post', path: '/v1/consent-events', summary: 'Register a consent event', tag: 'Consent', scope: 'consent:write',
    body: 'ConsentEventRequest', response: { status: 201, schema: 'ConsentEvent', headers: ['Location'] },
    errors: ['consent_term_not_found', 'consent_term_inactive', 'consent_term_no_current_version', 'consent_contact_type_channel_mismatch', 'consent_duplicate_rule', 'validation_error'] },
  jsonBody(), (ctx, p) => {
    const input = validateBody<EventInput>('ConsentEventRequest', (ctx.request as { body?: unknown }).body);
    const event = registerEvent(db, p.instance.id, input, Date.now());
    ctx.status = 201;
    ctx.set('Location', `/v1/consent-events/${event.id}`);
    ctx.body = event;
  });

  api.add({ method: 'get', path: '/v1/consent-events', summary: 'Consent history, newest first', tag: 'Consent', scope: 'consent:read',
    query: 'ConsentEventsQuery', response: { status: 200, schema: 'ConsentEvent', list: true } }, (ctx, p) => {
    const q = validateQuery<EventsQuery>('ConsentEventsQuery', ctx.query);
    ctx.body = collection(listEvents(db, p.instance.id, { termId: q.term_id, status: q.status, contact: q.contact }, pageOf(q)));
  });

  api.add({ method: 'get', path: '/v1/consent-events/:id', summary: 'Consent event detail', tag: 'Consent', scope: 'consent:read', params: { id: 'integer' },
    response: { status: 200, schema: 'ConsentEvent' }, errors: ['consent_event_not_found', 'validation_error'] }, (ctx, p) => {
    ctx.body = getEvent(db, p.instance.id, intParam(ctx, 'id'));
  });
}
