/**
 * GET /v1/activities/bounced and /v1/activities/clicks: the activity lists the spec names without
 * a shape (docs/reports.md). Bounced is the mail list of status 6 with the bounce reason and time;
 * clicks is built like the opens list, with the clicked URL per event.
 */
import { Api, collection, pageOf } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { mapPage } from '../../store/page';
import { mailFilter, type MailsQuery } from '../../accept/reports';
import { listBounced, presentBounced } from '../../accept/activity';
import { listEngagement, type EngagementGroup } from '../../tracking/engagement';

type Paged = { page?: number; page_size?: number };

export function activityRoutes(api: Api, { db }: HttpDeps): void {
  api.add({ method: 'get', path: '/v1/activities/bounced', summary: 'Bounced mails (status 6) with the bounce reason and time', tag: 'Mails',
    scope: 'mail:read', query: 'BouncedQuery', response: { status: 200, schema: 'BouncedMail', list: true }, errors: ['malformed_request'] }, (ctx, p) => {
    const q = validateQuery<MailsQuery & Paged>('BouncedQuery', ctx.query);
    ctx.body = collection(mapPage(listBounced(db, p.instance.id, mailFilter(q, p.instance), pageOf(q)), presentBounced));
  });

  api.add({ method: 'get', path: '/v1/activities/clicks', summary: 'Clicks (group_by none, mail_id or msg_id)', tag: 'Mails', scope: 'mail:read',
    query: 'ClicksQuery', response: { status: 200, schema: 'ClickActivity', list: true }, errors: ['malformed_request'] }, (ctx, p) => {
    const q = validateQuery<MailsQuery & Paged & { group_by?: EngagementGroup }>('ClicksQuery', ctx.query);
    ctx.body = collection(listEngagement(db, p.instance.id, 'click', mailFilter(q, p.instance), q.group_by ?? 'none', pageOf(q)));
  });
}
