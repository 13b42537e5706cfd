/** The field catalog of an instance (the six system fields are seeded by store/catalog.ts). */
import type { Db } from './db';
import { listPage, Where, type Page, type PageRequest } from './page';

export interface FieldRow {
  id: number;
  instance_id: number;
  name: string;
  field_key: string;
  type: string;
  is_system: number;
  is_active: number;
  /** JSON text. */
  config: string | null;
  created_at: number;
  updated_at: number;
}

export function getField(db: Db, instanceId: number, id: number): FieldRow | undefined {
  return db.prepare('SELECT * FROM fields WHERE instance_id = ? AND id = ?').get(instanceId, id) as FieldRow | undefined;
}

export function findFieldByKey(db: Db, instanceId: number, key: string): FieldRow | undefined {
  return db.prepare('SELECT * FROM fields WHERE instance_id = ? AND field_key = ?').get(instanceId, key) as FieldRow | undefined;
}

export function setFieldActive(db: Db, instanceId: number, id: number, active: boolean, at: number): void {
  db.prepare('UPDATE fields SET is_active = ?, updated_at = ? WHERE instance_id = ? AND id = ?').run(active ? 1 : 0, at, instanceId, id);
}

export function listFields(db: Db, instanceId: number, q: { is_active?: boolean }, p: PageRequest): Page<FieldRow> {
  const w = new Where().add('instance_id = ?', instanceId);
  if (q.is_active !== undefined) w.add('is_active = ?', q.is_active ? 1 : 0);
  return listPage<FieldRow>(db, { select: '*', from: `FROM fields ${w}`, params: w.params, orderBy: 'id' }, p);
}
