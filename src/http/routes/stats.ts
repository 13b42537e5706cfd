/** GET /v1/stats/overview: the instance's mails of a reception window by status, engagement and rates. */
import { Api } from '../api';
import type { HttpDeps } from '../deps';
import { validateQuery } from '../../lib/schemas';
import { iso } from '../../lib/time';
import { localDayStart, mailFilter, queryZone, type MailsQuery } from '../../accept/reports';
import { statsOverview } from '../../accept/stats';

export function statsRoutes(api: Api, { db }: HttpDeps): void {
  api.add({ method: 'get', path: '/v1/stats/overview', summary: 'Overview of the instance: mails by status, engagement and rates over a window', tag: 'Mails',
    scope: 'mail:read', query: 'StatsOverviewQuery', response: { status: 200, schema: 'StatsOverview' }, errors: ['malformed_request'] }, (ctx, p) => {
    const q = validateQuery<Pick<MailsQuery, 'start_date' | 'end_date' | 'tz'>>('StatsOverviewQuery', ctx.query);
    // Only the window's parameters reach the filter: the other parameters of the mail lists mean
    // nothing here and are ignored (a repeated `recipient` arrived as an array and threw: 500).
    const f = mailFilter({ start_date: q.start_date, end_date: q.end_date, tz: q.tz }, p.instance);
    const tz = queryZone(q, p.instance);
    ctx.body = {
      // The window asked for; what it counts begins no earlier than the online retention (mailFilter).
      start: iso(q.start_date ? localDayStart(q.start_date, tz, 'start_date') : f.from),
      end: f.to === Number.MAX_SAFE_INTEGER ? null : iso(f.to),
      tz,
      ...statsOverview(db, p.instance.id, f),
    };
  });
}
