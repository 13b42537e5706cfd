/** API keys: only a SHA-256 of the token is stored; the token itself is shown once at creation. */
import type { Db } from './db';
import { touchFresh } from './fresh';

export interface ApiKeyRow {
  id: number;
  instance_id: number;
  key_id: string;
  name: string | null;
  token_hash: Buffer;
  access_type: 'all' | 'scoped';
  scopes: string;
  ip_allow: string;
  revoked_at: number | null;
  created_at: number;
}

export function findApiKey(db: Db, keyId: string): ApiKeyRow | undefined {
  return db.prepare('SELECT * FROM api_keys WHERE key_id = ?').get(keyId) as ApiKeyRow | undefined;
}

export function insertApiKey(
  db: Db,
  instanceId: number,
  v: { keyId: string; name: string | null; tokenHash: Buffer; accessType: 'all' | 'scoped'; scopes: string[]; ipAllow: string[]; at: number },
): number {
  touchFresh(db);
  const r = db
    .prepare('INSERT INTO api_keys (instance_id, key_id, name, token_hash, access_type, scopes, ip_allow, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    .run(instanceId, v.keyId, v.name, v.tokenHash, v.accessType, JSON.stringify(v.scopes), JSON.stringify(v.ipAllow), v.at);
  return Number(r.lastInsertRowid);
}

export function revokeApiKey(db: Db, instanceId: number, keyId: string, at: number): boolean {
  touchFresh(db);
  const r = db.prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE instance_id = ? AND key_id = ?').run(at, instanceId, keyId);
  return r.changes > 0;
}
