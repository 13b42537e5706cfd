/** Seeded per-instance catalogs: consent purposes and fields (the rest arrives via the CLI). */
import type { Db } from './db';

export function insertPurpose(db: Db, instanceId: number, v: { code: string; name: string; description: string | null; at: number }): number {
  const r = db
    .prepare('INSERT INTO consent_purposes (instance_id, code, name, description, is_enabled, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?)')
    .run(instanceId, v.code, v.name, v.description, v.at, v.at);
  return Number(r.lastInsertRowid);
}

export function insertField(db: Db, instanceId: number, v: { name: string; key: string; type: string; isSystem: boolean; config?: unknown; at: number }): number {
  const r = db
    .prepare('INSERT INTO fields (instance_id, name, field_key, type, is_system, is_active, config, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)')
    .run(instanceId, v.name, v.key, v.type, v.isSystem ? 1 : 0, v.config === undefined ? null : JSON.stringify(v.config), v.at, v.at);
  return Number(r.lastInsertRowid);
}
