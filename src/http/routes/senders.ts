/** GET /v1/senders, /v1/senders/{id}, /v1/senders/search/names and /emails. */
import { Api, collection, intParam, pageOf } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { mapPage } from '../../store/page';
import { listSenders, presentSender, requireSender, type SenderFilter } from '../../senders/senders';

type SendersQuery = SenderFilter & { page?: number; page_size?: number };

export function senderRoutes(api: Api, { db }: HttpDeps): void {
  api.add({ method: 'get', path: '/v1/senders', summary: 'List senders', tag: 'Senders', scope: 'senders:read', query: 'SendersQuery',
    response: { status: 200, schema: 'Sender', list: true } }, (ctx, p) => {
    const q = validateQuery<SendersQuery>('SendersQuery', ctx.query);
    ctx.body = collection(mapPage(listSenders(db, p.instance.id, q, pageOf(q)), presentSender));
  });

  // Autocomplete: senders whose name (or address) contains q. Registered before /:id on purpose.
  for (const [kind, column] of [['names', 'name'], ['emails', 'email']] as const) {
    api.add({ method: 'get', path: `/v1/senders/search/${kind}`, summary: `Search senders by ${column}`, tag: 'Senders', scope: 'senders:read',
      query: 'SenderSearchQuery', response: { status: 200, schema: 'Sender', list: true } }, (ctx, p) => {
      const q = validateQuery<{ q?: string; page?: number; page_size?: number }>('SenderSearchQuery', ctx.query);
      const filter: SenderFilter = q.q === undefined ? {} : { [column]: q.q };
      ctx.body = collection(mapPage(listSenders(db, p.instance.id, filter, pageOf(q)), presentSender));
    });
  }

  api.add({ method: 'get', path: '/v1/senders/:id', summary: 'Sender detail', tag: 'Senders', scope: 'senders:read', params: { id: 'integer' },
    response: { status: 200, schema: 'Sender' }, errors: ['sender_not_found', 'validation_error'] }, (ctx, p) => {
    ctx.body = presentSender(requireSender(db, p.instance.id, intParam(ctx, 'id')));
  });
}
