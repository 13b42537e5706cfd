/**
 * Settings of the running server shared with the CLI (CONTRACT §3: the CLI "uses the same
 * configuration ... as the server"). The server records them at start; a CLI run given only the
 * data dir then prints the DNS records of the server's host name and validates domains through
 * the server's resolvers, instead of its own defaults (the OS host name, the system resolvers),
 * which would show other records than the API and fail a domain the API had just verified.
 */
import type { Db } from './db';

export interface ServerSettings { hostname: string; dnsServers: string[] }

export function recordServerSettings(db: Db, s: ServerSettings, at: number): void {
  const put = db.prepare('INSERT INTO server_settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at');
  db.transaction(() => {
    put.run('hostname', JSON.stringify(s.hostname), at);
    put.run('dnsServers', JSON.stringify(s.dnsServers), at);
  })();
}

/** What the server last recorded; an empty object before it ever started on this data dir. */
export function readServerSettings(db: Db): Partial<ServerSettings> {
  const rows = db.prepare('SELECT key, value FROM server_settings').all() as { key: string; value: string }[];
  const out: Partial<ServerSettings> = {};
  for (const r of rows) {
    const value: unknown = JSON.parse(r.value);
    if (r.key === 'hostname' && typeof value === 'string') out.hostname = value;
    if (r.key === 'dnsServers' && Array.isArray(value) && value.every((v) => typeof v === 'string')) out.dnsServers = value as string[];
  }
  return out;
}
