/**
 * Forms and their items. Items belong to a form (cascade) and may point at a catalog field or a
 * consent term of the same instance; the instance check is made when an item is written.
 */
import type { Db } from './db';
import { listPage, Where, type Page, type PageRequest } from './page';

export type FormKind = 'consent' | 'advanced';
export type FormType = 'acquisition' | 'update';
export type FormItemKind = 'field' | 'consent' | 'separator' | 'text';

export interface FormRow {
  id: number;
  instance_id: number;
  name: string;
  kind: FormKind;
  type: FormType;
  dataset_id: number | null;
  public_token: string;
  is_default: number;
  is_active: number;
  settings: string | null;
  created_at: number;
  updated_at: number;
}

/** An item with its field resolved (f_* columns are null when the item is not a field). */
export interface FormItemRow {
  id: number;
  form_id: number;
  position: number;
  kind: FormItemKind;
  field_id: number | null;
  term_id: number | null;
  label: string | null;
  is_required: number;
  config: string | null;
  f_name: string | null;
  f_key: string | null;
  f_type: string | null;
}

export interface FormValues {
  name: string;
  kind: FormKind;
  type: FormType;
  publicToken: string;
  isDefault: boolean;
  isActive: boolean;
  settings: string | null;
}

export interface FormItemValues {
  kind: FormItemKind;
  fieldId: number | null;
  termId: number | null;
  label: string | null;
  isRequired: boolean;
}

export function insertForm(db: Db, instanceId: number, v: FormValues, items: FormItemValues[], at: number): number {
  const r = db
    .prepare(`INSERT INTO forms (instance_id, name, kind, type, dataset_id, public_token, is_default, is_active, settings, created_at, updated_at)
              VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)`)
    .run(instanceId, v.name, v.kind, v.type, v.publicToken, v.isDefault ? 1 : 0, v.isActive ? 1 : 0, v.settings, at, at);
  const formId = Number(r.lastInsertRowid);
  const ins = db.prepare('INSERT INTO form_items (form_id, position, kind, field_id, term_id, label, is_required) VALUES (?, ?, ?, ?, ?, ?, ?)');
  items.forEach((it, i) => ins.run(formId, i + 1, it.kind, it.fieldId, it.termId, it.label, it.isRequired ? 1 : 0));
  return formId;
}

export function getForm(db: Db, instanceId: number, id: number): FormRow | undefined {
  return db.prepare('SELECT * FROM forms WHERE instance_id = ? AND id = ?').get(instanceId, id) as FormRow | undefined;
}

export function listForms(db: Db, instanceId: number, q: { kind?: FormKind }, p: PageRequest): Page<FormRow> {
  const w = new Where().add('instance_id = ?', instanceId);
  if (q.kind !== undefined) w.add('kind = ?', q.kind);
  return listPage<FormRow>(db, { select: '*', from: `FROM forms ${w}`, params: w.params, orderBy: 'id' }, p);
}

/** The items of several forms of one instance, in configured order: one query per page. */
export function formItems(db: Db, instanceId: number, formIds: number[]): FormItemRow[] {
  if (formIds.length === 0) return [];
  const marks = formIds.map(() => '?').join(', ');
  return db
    .prepare(`SELECT fi.*, f.name AS f_name, f.field_key AS f_key, f.type AS f_type
              FROM form_items fi JOIN forms fo ON fo.id = fi.form_id LEFT JOIN fields f ON f.id = fi.field_id
              WHERE fo.instance_id = ? AND fi.form_id IN (${marks}) ORDER BY fi.form_id, fi.position, fi.id`)
    .all(instanceId, ...formIds) as FormItemRow[];
}

/** true when the consent term exists in this instance (consent items point at terms). */
export function termExists(db: Db, instanceId: number, termId: number): boolean {
  return db.prepare('SELECT 1 FROM consent_terms WHERE instance_id = ? AND id = ?').get(instanceId, termId) !== undefined;
}
