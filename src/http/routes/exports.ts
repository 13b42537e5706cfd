/**
 * GET /v1/activities/{sent,opens,bounced,clicks}/export: every item of the list with the same
 * filters (no pages, at most exportRowCap rows), as CSV (default) or a JSON array, streamed from a
 * read-only snapshot of the store, leased (http/export.ts). X-Export-Truncated says whether the cap cut it.
 */
import { Api, type Ctx } from '../api';
import type { HttpDeps } from '../deps';
import type { Db } from '../../store/db';
import type { ListQuery } from '../../store/page';
import type { MailFilter, MailRow } from '../../store/mails';
import { openReader } from '../../store/reader';
import { validateQuery } from '../../lib/schemas';
import { mailFilter, presentMail, type MailsQuery } from '../../accept/reports';
import { bouncedQuery, presentBounced, sentQuery, type BouncedRow } from '../../accept/activity';
import { engagementColumns, engagementQuery, presentEngagement, type EngagementGroup, type EngagementRow } from '../../tracking/engagement';
import { exportRowCap, exportStream, type ExportFormat } from '../export';

type ExportQuery = MailsQuery & { format?: ExportFormat; group_by?: EngagementGroup };

/** How one list becomes an export: its query, its item and its columns. */
interface ExportList {
  name: 'sent' | 'opens' | 'bounced' | 'clicks';
  queryId: string;
  item: string;
  build(instanceId: number, f: MailFilter, q: ExportQuery): { query: ListQuery; present: (row: never) => Record<string, unknown>; columns: string[] };
}

const mailFields = ['mail_id', 'msg_id', 'to', 'subject', 'sender', 'status', 'opens', 'clicks', 'received_at', 'queued_at', 'schedule_at',
  'sent_at', 'delay', 'custom_msg_id', 'custom_group_code'];

const lists: ExportList[] = [
  { name: 'sent', queryId: 'SentExportQuery', item: 'Mail',
    build: (id, f) => ({ query: sentQuery(id, f), present: (r: MailRow) => presentMail(r), columns: mailFields }) },
  { name: 'bounced', queryId: 'BouncedExportQuery', item: 'BouncedMail',
    build: (id, f) => ({ query: bouncedQuery(id, f), present: (r: BouncedRow) => presentBounced(r), columns: [...mailFields, 'reason', 'bounced_at'] }) },
  { name: 'opens', queryId: 'OpensExportQuery', item: 'OpenActivity',
    build: (id, f, q) => engagementExport(id, 'open', f, q.group_by ?? 'none') },
  { name: 'clicks', queryId: 'ClicksExportQuery', item: 'ClickActivity',
    build: (id, f, q) => engagementExport(id, 'click', f, q.group_by ?? 'none') },
];

function engagementExport(instanceId: number, kind: 'open' | 'click', f: MailFilter, group: EngagementGroup) {
  const present = presentEngagement(kind, group);
  return { query: engagementQuery(instanceId, kind, f, group), present: (r: EngagementRow) => present(r), columns: engagementColumns(kind, group) };
}

function sendExport(ctx: Ctx, db: Db, spillDir: string, list: ExportList, format: ExportFormat, spec: ReturnType<ExportList['build']>): void {
  const reader = openReader(db);
  try {
    ctx.set('X-Export-Truncated', String(reader.hasMoreThan(spec.query, exportRowCap)));
  } catch (err) {
    reader.close();
    throw err;
  }
  ctx.set('Content-Disposition', `attachment; filename="${list.name}-export.${format}"`);
  ctx.set('Cache-Control', 'no-store');
  ctx.type = format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8';
  ctx.body = exportStream(reader, { ...spec, format }, { spillDir });
}

export function exportRoutes(api: Api, { db, config }: HttpDeps): void {
  for (const list of lists) {
    api.add({ method: 'get', path: `/v1/activities/${list.name}/export`, tag: 'Mails', scope: 'mail:read', query: list.queryId,
      summary: `Export of GET /v1/activities/${list.name}: every matching item (at most ${exportRowCap}), CSV (text/csv, default) or a JSON array (format=json)`,
      response: { status: 200, schema: `${list.item}Export`, headers: ['Content-Disposition', 'X-Export-Truncated'], csv: true }, errors: ['malformed_request'] }, (ctx, p) => {
      const q = validateQuery<ExportQuery>(list.queryId, ctx.query);
      const spec = list.build(p.instance.id, mailFilter(q, p.instance), q);
      sendExport(ctx, db, config.dataDir, list, q.format ?? 'csv', spec);
    });
  }
}
