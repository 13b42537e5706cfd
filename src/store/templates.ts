/**
 * Mail templates of an instance. Deletion is soft (deleted_at): a deleted template is gone for
 * every reader (API, send path) but its row stays, so mails that used it keep a referent.
 */
import type { Db } from './db';
import { containsText } from './db';
import { listPage, Where, type Page, type PageRequest } from './page';

export type TemplateStatus = 'draft' | 'public';
export type TemplateProvider = 'bee' | 'ckeditor';

/** The columns a template is written with (insert: all; update: those present). */
export interface TemplateValues {
  name: string;
  subject: string | null;
  status: TemplateStatus;
  description: string | null;
  provider: TemplateProvider;
  html: string | null;
  text: string | null;
  /** JSON text of the editor configuration. */
  config: string | null;
}

export interface TemplateRow extends TemplateValues {
  id: number;
  instance_id: number;
  deleted_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface TemplateFilter { name?: string; status?: TemplateStatus }

export function insertTemplate(db: Db, instanceId: number, v: TemplateValues, at: number): number {
  const r = db
    .prepare(`INSERT INTO templates (instance_id, name, subject, status, description, provider, html, text, config, created_at, updated_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(instanceId, v.name, v.subject, v.status, v.description, v.provider, v.html, v.text, v.config, at, at);
  return Number(r.lastInsertRowid);
}

const columns = ['name', 'subject', 'status', 'description', 'provider', 'html', 'text', 'config'] as const;

/** Updates the given columns of a live template; false when there is no such template. */
export function updateTemplate(db: Db, instanceId: number, id: number, v: Partial<TemplateValues>, at: number): boolean {
  const set: string[] = ['updated_at = ?'];
  const params: unknown[] = [at];
  for (const c of columns) {
    if (v[c] === undefined) continue;
    set.push(`${c} = ?`);
    params.push(v[c]);
  }
  return db.prepare(`UPDATE templates SET ${set.join(', ')} WHERE instance_id = ? AND id = ? AND deleted_at IS NULL`)
    .run(...params, instanceId, id).changes > 0;
}

export function deleteTemplate(db: Db, instanceId: number, id: number, at: number): boolean {
  return db.prepare('UPDATE templates SET deleted_at = ?, updated_at = ? WHERE instance_id = ? AND id = ? AND deleted_at IS NULL')
    .run(at, at, instanceId, id).changes > 0;
}

export function getTemplate(db: Db, instanceId: number, id: number): TemplateRow | undefined {
  return db.prepare('SELECT * FROM templates WHERE instance_id = ? AND id = ? AND deleted_at IS NULL').get(instanceId, id) as TemplateRow | undefined;
}

export function listTemplates(db: Db, instanceId: number, q: TemplateFilter, p: PageRequest): Page<TemplateRow> {
  const w = new Where().add('instance_id = ?', instanceId).add('deleted_at IS NULL');
  if (q.name !== undefined) w.add(...containsText('name', q.name));
  if (q.status !== undefined) w.add('status = ?', q.status);
  // The list never shows html or config: do not read them either (they can be megabytes).
  const select = 'id, instance_id, name, subject, status, description, provider, NULL AS html, NULL AS text, NULL AS config, deleted_at, created_at, updated_at';
  return listPage<TemplateRow>(db, { select, from: `FROM templates ${w}`, params: w.params, orderBy: 'id' }, p);
}
