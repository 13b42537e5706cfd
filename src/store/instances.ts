/** Instances (tenants): identity, activation, limits and subscription state. */
import type { Db } from './db';
import { touchFresh } from './fresh';

export interface InstanceRow {
  id: number;
  slug: string;
  name: string;
  timezone: string;
  is_active: number;
  subscription_active: number;
  send_limit: number | null;
  send_cycle_days: number;
  cycle_anchor_at: number;
  max_domains: number | null;
  max_senders: number | null;
  attachment_max_bytes: number;
  bandwidth_bytes_per_second: number | null;
  bandwidth_burst_bytes: number | null;
  ip_allow: string;
  scoped_keys_allowed: number;
  created_at: number;
  updated_at: number;
}

export function findInstanceBySlug(db: Db, slug: string): InstanceRow | undefined {
  return db.prepare('SELECT * FROM instances WHERE slug = ?').get(slug) as InstanceRow | undefined;
}

export function getInstance(db: Db, instanceId: number): InstanceRow {
  return db.prepare('SELECT * FROM instances WHERE id = ?').get(instanceId) as InstanceRow;
}

export function insertInstance(db: Db, v: { slug: string; name: string; timezone: string; at: number }): number {
  touchFresh(db);
  const r = db
    .prepare('INSERT INTO instances (slug, name, timezone, cycle_anchor_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(v.slug, v.name, v.timezone, v.at, v.at, v.at);
  return Number(r.lastInsertRowid);
}

export function setInstanceActive(db: Db, instanceId: number, active: boolean, at: number): void {
  touchFresh(db);
  db.prepare('UPDATE instances SET is_active = ?, updated_at = ? WHERE id = ?').run(active ? 1 : 0, at, instanceId);
}

export type LimitColumn =
  | 'send_limit' | 'send_cycle_days' | 'max_domains' | 'max_senders' | 'attachment_max_bytes'
  | 'bandwidth_bytes_per_second' | 'bandwidth_burst_bytes' | 'ip_allow' | 'subscription_active' | 'scoped_keys_allowed';

export function updateInstanceLimits(db: Db, instanceId: number, changes: Partial<Record<LimitColumn, unknown>>, at: number): void {
  touchFresh(db);
  const keys = Object.keys(changes) as LimitColumn[];
  if (keys.length === 0) return;
  const set = keys.map((k) => `${k} = ?`).join(', ');
  db.prepare(`UPDATE instances SET ${set}, updated_at = ? WHERE id = ?`).run(...keys.map((k) => changes[k]), at, instanceId);
}
