/**
 * The field catalog: canonical keys (uppercase, underscores), the ten types of the spec, and the
 * six system keys that no added field may take. Reads are paged; writes come from the CLI.
 */
import type { Db } from '../store/db';
import * as store from '../store/fields';
import { insertField } from '../store/catalog';
import { mapPage, type Page, type PageRequest } from '../store/page';
import { ServiceError } from '../errors';
import { iso } from '../lib/time';
import { parseJson } from '../lib/json';

export const fieldTypes = ['email', 'phone', 'text', 'textarea', 'number', 'date', 'select', 'boolean', 'url', 'address'] as const;
export type FieldType = (typeof fieldTypes)[number];
/** Seeded with every instance (instances/instances.ts): reserved, never added twice. */
export const systemFieldKeys: readonly string[] = ['EMAIL', 'PHONE', 'FIRST_NAME', 'LAST_NAME', 'UNIQUECODE', 'ADDRESS'];
const maxKeyLength = 64;

export function presentField(f: store.FieldRow) {
  return {
    id: f.id,
    name: f.name,
    field_key: f.field_key,
    type: f.type,
    is_system: f.is_system === 1,
    is_active: f.is_active === 1,
    config: parseJson<Record<string, unknown> | null>(f.config, null),
    created_at: iso(f.created_at),
    updated_at: iso(f.updated_at),
  };
}
export type FieldObject = ReturnType<typeof presentField>;

export function listFields(db: Db, instanceId: number, q: { is_active?: boolean }, p: PageRequest): Page<FieldObject> {
  return mapPage(store.listFields(db, instanceId, q, p), presentField);
}

/**
 * "first name", "First-Name" and "FIRST_NAME" are one key: accents dropped, letters uppercased,
 * every run of other characters one underscore. Returns '' when nothing usable remains.
 */
export function canonicalFieldKey(input: string): string {
  return input.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '');
}

function invalid(pointer: string, code: string, message: string, params?: Record<string, unknown>): ServiceError {
  return new ServiceError('validation_error', message, { errors: [{ pointer, code, message, ...(params ? { params } : {}) }] });
}

export function addField(db: Db, instanceId: number, v: { name: string; key: string; type: string; isActive?: boolean; config?: string }, at: number): store.FieldRow {
  const name = v.name.trim();
  if (!name) throw invalid('/name', 'string_too_short', 'The field name must not be empty.', { min_length: 1 });
  const key = canonicalFieldKey(v.key);
  if (!key) throw invalid('/field_key', 'string_pattern_mismatch', 'The key needs at least one letter or digit.', { pattern: '^[A-Z0-9_]+$' });
  if (key.length > maxKeyLength) throw invalid('/field_key', 'string_too_long', `The key has at most ${maxKeyLength} characters.`, { max_length: maxKeyLength });
  if (!(fieldTypes as readonly string[]).includes(v.type)) throw invalid('/type', 'enum', `Unknown field type ${v.type}.`, { expected: fieldTypes.join(', ') });
  let config: unknown;
  if (v.config !== undefined) {
    config = parseJson<unknown>(v.config, undefined);
    if (typeof config !== 'object' || config === null || Array.isArray(config)) throw invalid('/config', 'dict_type', 'The config must be a JSON object.');
  }
  if (systemFieldKeys.includes(key)) throw new ServiceError('field_key_reserved', `${key} is the key of a system field.`);
  if (store.findFieldByKey(db, instanceId, key)) throw new ServiceError('field_key_already_exists', `A field with key ${key} already exists.`);
  const id = insertField(db, instanceId, { name, key, type: v.type, isSystem: false, config, at });
  if (v.isActive === false) store.setFieldActive(db, instanceId, id, false, at);
  return requireField(db, instanceId, id);
}

export function requireField(db: Db, instanceId: number, id: number): store.FieldRow {
  const f = store.getField(db, instanceId, id);
  if (!f) throw new ServiceError('field_not_found', `Field ${id} does not exist.`);
  return f;
}

export function requireFieldByKey(db: Db, instanceId: number, key: string): store.FieldRow {
  const f = store.findFieldByKey(db, instanceId, canonicalFieldKey(key));
  if (!f) throw new ServiceError('field_not_found', `Field ${key} does not exist.`);
  return f;
}

/** Deactivates (or reactivates) a field: an inactive field cannot be attached to new forms. */
export function setFieldActive(db: Db, instanceId: number, key: string, active: boolean, at: number): store.FieldRow {
  const f = requireFieldByKey(db, instanceId, key);
  store.setFieldActive(db, instanceId, f.id, active, at);
  return requireField(db, instanceId, f.id);
}
