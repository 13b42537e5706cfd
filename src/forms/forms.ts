/**
 * Forms with their items resolved: a field item carries its catalog field ({id, name, field_key,
 * type}), a consent item its term_id. Items are written once, with the form; an inactive field
 * cannot be attached (spec, Field: read-only).
 */
import type { Db } from '../store/db';
import * as store from '../store/forms';
import type { FieldRow } from '../store/fields';
import type { Page, PageRequest } from '../store/page';
import { ServiceError } from '../errors';
import { iso } from '../lib/time';
import { parseJson } from '../lib/json';
import { randomToken } from '../lib/tokens';
import { requireFieldByKey } from '../fields/fields';

export const formKinds: readonly store.FormKind[] = ['consent', 'advanced'];
export const formTypes: readonly store.FormType[] = ['acquisition', 'update'];

export function presentFormItem(i: store.FormItemRow) {
  return {
    id: i.id,
    position: i.position,
    kind: i.kind,
    field: i.field_id === null ? null : { id: i.field_id, name: i.f_name, field_key: i.f_key, type: i.f_type },
    term_id: i.term_id,
    label: i.label,
    is_required: i.is_required === 1,
    config: parseJson<Record<string, unknown> | null>(i.config, null),
  };
}

export function presentForm(f: store.FormRow, items: store.FormItemRow[]) {
  return {
    id: f.id,
    name: f.name,
    kind: f.kind,
    type: f.type,
    dataset_id: f.dataset_id,
    public_token: f.public_token,
    is_default: f.is_default === 1,
    is_active: f.is_active === 1,
    settings: parseJson<Record<string, unknown> | null>(f.settings, null),
    created_at: iso(f.created_at),
    updated_at: iso(f.updated_at),
    items: items.filter((i) => i.form_id === f.id).map(presentFormItem),
  };
}
export type FormObject = ReturnType<typeof presentForm>;

export function listForms(db: Db, instanceId: number, q: { kind?: store.FormKind }, p: PageRequest): Page<FormObject> {
  const page = store.listForms(db, instanceId, q, p);
  const items = store.formItems(db, instanceId, page.items.map((f) => f.id));
  return { ...page, items: page.items.map((f) => presentForm(f, items)) };
}

export function requireForm(db: Db, instanceId: number, id: number): FormObject {
  const f = store.getForm(db, instanceId, id);
  if (!f) throw new ServiceError('form_not_found', `Form ${id} does not exist.`);
  return presentForm(f, store.formItems(db, instanceId, [f.id]));
}

function invalid(pointer: string, code: string, message: string, params?: Record<string, unknown>): ServiceError {
  return new ServiceError('validation_error', message, { errors: [{ pointer, code, message, ...(params ? { params } : {}) }] });
}

export interface FormInput {
  name: string;
  kind: string;
  type: string;
  /** `KEY` or `KEY:required`, in order. */
  fields?: string[];
  /** consent term ids, in order, after the fields. */
  terms?: number[];
  isDefault?: boolean;
  isActive?: boolean;
  /** JSON text of an object (title, header_text, footer_text ...). */
  settings?: string;
}

/**
 * A consent form is "identifier plus consent items" (spec, Form.kind): its fields are the ones a
 * consent rule names a contact by (email_address, phone_number, uniquecode).
 */
const identifierField = (f: FieldRow): boolean => f.type === 'email' || f.type === 'phone' || f.field_key === 'UNIQUECODE';

function fieldItems(db: Db, instanceId: number, specs: string[], kind: string): store.FormItemValues[] {
  return specs.map((spec, index) => {
    const m = /^(.+?)(:required)?$/.exec(spec.trim());
    const field = requireFieldByKey(db, instanceId, m?.[1] ?? spec);
    if (field.is_active !== 1) throw invalid(`/items/${index}/field`, 'value_error.inactive', `Field ${field.field_key} is inactive and cannot be attached to a form.`);
    if (kind === 'consent' && !identifierField(field)) {
      throw invalid(`/items/${index}/field`, 'value_error.identifier', `A consent form holds identifiers (email, phone or UNIQUECODE fields) and consent items; ${field.field_key} is none: use an advanced form.`);
    }
    return { kind: 'field', fieldId: field.id, termId: null, label: field.name, isRequired: Boolean(m?.[2]) };
  });
}

export function addForm(db: Db, instanceId: number, v: FormInput, at: number): FormObject {
  const name = v.name.trim();
  if (!name) throw invalid('/name', 'string_too_short', 'The form name must not be empty.', { min_length: 1 });
  if (!(formKinds as readonly string[]).includes(v.kind)) throw invalid('/kind', 'enum', `Unknown form kind ${v.kind}.`, { expected: formKinds.join(', ') });
  if (!(formTypes as readonly string[]).includes(v.type)) throw invalid('/type', 'enum', `Unknown form type ${v.type}.`, { expected: formTypes.join(', ') });
  let settings: string | null = null;
  if (v.settings !== undefined) {
    const parsed = parseJson<unknown>(v.settings, undefined);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('/settings', 'dict_type', 'The settings must be a JSON object.');
    settings = JSON.stringify(parsed);
  }
  const items = fieldItems(db, instanceId, v.fields ?? [], v.kind);
  for (const termId of v.terms ?? []) {
    if (!store.termExists(db, instanceId, termId)) throw new ServiceError('consent_term_not_found', `Consent term ${termId} does not exist.`);
    items.push({ kind: 'consent', fieldId: null, termId, label: null, isRequired: true });
  }
  const id = store.insertForm(db, instanceId, {
    name,
    kind: v.kind as store.FormKind,
    type: v.type as store.FormType,
    publicToken: randomToken(24),
    isDefault: v.isDefault ?? false,
    isActive: v.isActive ?? true,
    settings,
  }, items, at);
  return requireForm(db, instanceId, id);
}
