/** GET /v1/activities/opens (spec): opens per event, per recipient or per message. */
import { Api, collection, pageOf } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { mailFilter, type MailsQuery } from '../../accept/reports';
import { listEngagement, type EngagementGroup } from '../../tracking/engagement';

type OpensQuery = MailsQuery & { group_by?: EngagementGroup; page?: number; page_size?: number };

export function opensRoutes(api: Api, { db }: HttpDeps): void {
  api.add({ method: 'get', path: '/v1/activities/opens', summary: 'Opens (group_by none, mail_id or msg_id)', tag: 'Mails', scope: 'mail:read',
    query: 'OpensQuery', response: { status: 200, schema: 'OpenActivity', list: true }, errors: ['malformed_request'] }, (ctx, p) => {
    const q = validateQuery<OpensQuery>('OpensQuery', ctx.query);
    ctx.body = collection(listEngagement(db, p.instance.id, 'open', mailFilter(q, p.instance), q.group_by ?? 'none', pageOf(q)));
  });
}
