/**
 * Consent rows: purposes, terms with their purposes and versions, and the append-only history of
 * events and rules. Events and rules are only ever inserted (the law wants the full history);
 * nothing here updates or deletes them.
 */
import type { Db } from './db';
import { listPage, Where, type Page, type PageRequest } from './page';

export type Channel = 'mail' | 'sms' | 'wsp' | 'call' | 'push';
export type ContactType = 'email_address' | 'phone_number' | 'uniquecode';
export type RuleAction = 'allow' | 'deny';

export interface PurposeRow { id: number; instance_id: number; code: string; name: string; description: string | null; is_enabled: number; created_at: number; updated_at: number }
export interface TermRow { id: number; instance_id: number; name: string; type: string; channels: string; is_active: number; created_at: number; updated_at: number }
export interface TermVersionRow { id: number; term_id: number; version: string; body: string; document_url: string | null; is_current: number; published_at: number | null; created_at: number }
export interface EventRow { id: number; instance_id: number; term_id: number; term_version_id: number; status: string; method: string; source: string; confirmed_at: number | null; expired_at: number | null; created_at: number }
export interface RuleRow { id: number; event_id: number; channel: Channel; contact_type: ContactType; contact: string; purpose_id: number; action: RuleAction; created_at: number }
/** A rule with the status of its event: what precedence needs. */
export type RuleFactRow = RuleRow & { event_status: string };

// ---- purposes

export function listPurposes(db: Db, instanceId: number, q: { isEnabled?: boolean }, p: PageRequest): Page<PurposeRow> {
  const w = new Where().add('instance_id = ?', instanceId);
  if (q.isEnabled !== undefined) w.add('is_enabled = ?', q.isEnabled ? 1 : 0);
  return listPage<PurposeRow>(db, { select: '*', from: `FROM consent_purposes ${w}`, params: w.params, orderBy: 'id' }, p);
}

export function allPurposes(db: Db, instanceId: number): PurposeRow[] {
  return db.prepare('SELECT * FROM consent_purposes WHERE instance_id = ? ORDER BY id').all(instanceId) as PurposeRow[];
}

export function findPurposeByCode(db: Db, instanceId: number, code: string): PurposeRow | undefined {
  return db.prepare('SELECT * FROM consent_purposes WHERE instance_id = ? AND code = ?').get(instanceId, code) as PurposeRow | undefined;
}

export function findPurpose(db: Db, instanceId: number, id: number): PurposeRow | undefined {
  return db.prepare('SELECT * FROM consent_purposes WHERE instance_id = ? AND id = ?').get(instanceId, id) as PurposeRow | undefined;
}

export function setPurposeEnabled(db: Db, instanceId: number, id: number, enabled: boolean, at: number): void {
  db.prepare('UPDATE consent_purposes SET is_enabled = ?, updated_at = ? WHERE instance_id = ? AND id = ?').run(enabled ? 1 : 0, at, instanceId, id);
}

export function updatePurpose(db: Db, instanceId: number, id: number, v: { name: string; description: string | null; at: number }): void {
  db.prepare('UPDATE consent_purposes SET name = ?, description = ?, updated_at = ? WHERE instance_id = ? AND id = ?').run(v.name, v.description, v.at, instanceId, id);
}

/** The purposes a sender declares, with their mode (sender_purposes joined to the instance's purposes). */
export function senderModes(db: Db, instanceId: number, senderId: number): { purpose_id: number; code: string; mode: 'opt_in' | 'opt_out' }[] {
  return db.prepare(`SELECT sp.purpose_id, p.code, sp.mode FROM sender_purposes sp
      JOIN consent_purposes p ON p.id = sp.purpose_id JOIN senders s ON s.id = sp.sender_id
      WHERE s.instance_id = ? AND sp.sender_id = ? ORDER BY p.code`).all(instanceId, senderId) as { purpose_id: number; code: string; mode: 'opt_in' | 'opt_out' }[];
}

// ---- terms

export function insertTerm(db: Db, instanceId: number, v: { name: string; type: string; channels: Channel[]; purposeIds: number[]; isActive: boolean; at: number }): number {
  const r = db.prepare('INSERT INTO consent_terms (instance_id, name, type, channels, is_active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(instanceId, v.name, v.type, JSON.stringify(v.channels), v.isActive ? 1 : 0, v.at, v.at);
  const termId = Number(r.lastInsertRowid);
  const ins = db.prepare('INSERT INTO consent_term_purposes (term_id, purpose_id) VALUES (?, ?)');
  for (const id of v.purposeIds) ins.run(termId, id);
  return termId;
}

export function updateTerm(db: Db, instanceId: number, id: number, v: { name: string; type: string; channels: Channel[]; purposeIds: number[]; isActive: boolean; at: number }): void {
  db.prepare('UPDATE consent_terms SET name = ?, type = ?, channels = ?, is_active = ?, updated_at = ? WHERE instance_id = ? AND id = ?')
    .run(v.name, v.type, JSON.stringify(v.channels), v.isActive ? 1 : 0, v.at, instanceId, id);
  db.prepare('DELETE FROM consent_term_purposes WHERE term_id = ?').run(id);
  const ins = db.prepare('INSERT INTO consent_term_purposes (term_id, purpose_id) VALUES (?, ?)');
  for (const purposeId of v.purposeIds) ins.run(id, purposeId);
}

/** Makes one version of a term its only current one. */
export function setCurrentVersion(db: Db, instanceId: number, termId: number, versionId: number, at: number): void {
  // In two statements: the index allowing one current version per term is checked row by row,
  // so one UPDATE setting the new one before clearing an older one broke it.
  db.prepare('UPDATE consent_term_versions SET is_current = 0 WHERE term_id = ? AND is_current = 1 AND term_id IN (SELECT id FROM consent_terms WHERE instance_id = ?)').run(termId, instanceId);
  db.prepare('UPDATE consent_term_versions SET is_current = 1 WHERE id = ? AND term_id = ? AND term_id IN (SELECT id FROM consent_terms WHERE instance_id = ?)').run(versionId, termId, instanceId);
  db.prepare('UPDATE consent_terms SET updated_at = ? WHERE instance_id = ? AND id = ?').run(at, instanceId, termId);
}

export function findTerm(db: Db, instanceId: number, id: number): TermRow | undefined {
  return db.prepare('SELECT * FROM consent_terms WHERE instance_id = ? AND id = ?').get(instanceId, id) as TermRow | undefined;
}

export function listTerms(db: Db, instanceId: number, p: PageRequest): Page<TermRow> {
  return listPage<TermRow>(db, { select: '*', from: 'FROM consent_terms WHERE instance_id = ?', params: [instanceId], orderBy: 'id' }, p);
}

/** Purposes and versions of several terms at once (one query each, not one per term). */
export function termDetails(db: Db, instanceId: number, termIds: number[]): { purposes: Map<number, number[]>; versions: Map<number, TermVersionRow[]> } {
  const purposes = new Map<number, number[]>();
  const versions = new Map<number, TermVersionRow[]>();
  if (termIds.length === 0) return { purposes, versions };
  const marks = termIds.map(() => '?').join(',');
  const pRows = db.prepare(`SELECT tp.term_id, tp.purpose_id FROM consent_term_purposes tp JOIN consent_terms t ON t.id = tp.term_id
      WHERE t.instance_id = ? AND tp.term_id IN (${marks}) ORDER BY tp.purpose_id`).all(instanceId, ...termIds) as { term_id: number; purpose_id: number }[];
  for (const r of pRows) purposes.set(r.term_id, [...(purposes.get(r.term_id) ?? []), r.purpose_id]);
  const vRows = db.prepare(`SELECT v.* FROM consent_term_versions v JOIN consent_terms t ON t.id = v.term_id
      WHERE t.instance_id = ? AND v.term_id IN (${marks}) ORDER BY v.id`).all(instanceId, ...termIds) as TermVersionRow[];
  for (const r of vRows) versions.set(r.term_id, [...(versions.get(r.term_id) ?? []), r]);
  return { purposes, versions };
}

export function currentVersion(db: Db, instanceId: number, termId: number): TermVersionRow | undefined {
  return db.prepare(`SELECT v.* FROM consent_term_versions v JOIN consent_terms t ON t.id = v.term_id
      WHERE t.instance_id = ? AND v.term_id = ? AND v.is_current = 1`).get(instanceId, termId) as TermVersionRow | undefined;
}

/** Publishes a version; `current` makes it the only current one (the partial unique index holds that). */
export function insertTermVersion(db: Db, instanceId: number, termId: number, v: { version: string; body: string; documentUrl: string | null; current: boolean; at: number }): number {
  if (v.current) db.prepare('UPDATE consent_term_versions SET is_current = 0 WHERE term_id = ? AND term_id IN (SELECT id FROM consent_terms WHERE instance_id = ?)').run(termId, instanceId);
  const r = db.prepare('INSERT INTO consent_term_versions (term_id, version, body, document_url, is_current, published_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(termId, v.version, v.body, v.documentUrl, v.current ? 1 : 0, v.at, v.at);
  db.prepare('UPDATE consent_terms SET updated_at = ? WHERE instance_id = ? AND id = ?').run(v.at, instanceId, termId);
  return Number(r.lastInsertRowid);
}

// ---- events and rules (insert-only)

export interface NewRule { channel: Channel; contactType: ContactType; contact: string; purposeId: number; action: RuleAction }

export function insertEvent(db: Db, instanceId: number, v: { termId: number; termVersionId: number; status: string; method: string; source: string; confirmedAt: number | null; at: number; rules: NewRule[] }): number {
  const r = db.prepare(`INSERT INTO consent_events (instance_id, term_id, term_version_id, status, method, source, confirmed_at, expired_at, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)`).run(instanceId, v.termId, v.termVersionId, v.status, v.method, v.source, v.confirmedAt, v.at);
  const eventId = Number(r.lastInsertRowid);
  const ins = db.prepare('INSERT INTO consent_rules (event_id, instance_id, channel, contact_type, contact, purpose_id, action, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  for (const rule of v.rules) ins.run(eventId, instanceId, rule.channel, rule.contactType, rule.contact, rule.purposeId, rule.action, v.at);
  return eventId;
}

export function findEvent(db: Db, instanceId: number, id: number): EventRow | undefined {
  return db.prepare('SELECT * FROM consent_events WHERE instance_id = ? AND id = ?').get(instanceId, id) as EventRow | undefined;
}

export interface EventFilter { termId?: number; status?: string; contact?: string }

/** History, newest first; `contact` is an exact match on the stored form of any rule's identifier. */
export function listEvents(db: Db, instanceId: number, q: EventFilter, p: PageRequest): Page<EventRow> {
  const w = new Where().add('e.instance_id = ?', instanceId);
  if (q.termId !== undefined) w.add('e.term_id = ?', q.termId);
  if (q.status !== undefined) w.add('e.status = ?', q.status);
  if (q.contact !== undefined) w.add('EXISTS (SELECT 1 FROM consent_rules r WHERE r.instance_id = e.instance_id AND r.event_id = e.id AND r.contact = ?)', q.contact);
  return listPage<EventRow>(db, { select: 'e.*', from: `FROM consent_events e ${w}`, params: w.params, orderBy: 'e.created_at DESC, e.id DESC' }, p);
}

export function rulesOfEvents(db: Db, instanceId: number, eventIds: number[]): Map<number, RuleRow[]> {
  const out = new Map<number, RuleRow[]>();
  if (eventIds.length === 0) return out;
  const rows = db.prepare(`SELECT id, event_id, channel, contact_type, contact, purpose_id, action, created_at FROM consent_rules
      WHERE instance_id = ? AND event_id IN (${eventIds.map(() => '?').join(',')}) ORDER BY id`).all(instanceId, ...eventIds) as RuleRow[];
  for (const r of rows) out.set(r.event_id, [...(out.get(r.event_id) ?? []), r]);
  return out;
}

/** Every rule stored for one identifier (any channel, any purpose), with its event's status. */
export function rulesForContact(db: Db, instanceId: number, contactType: ContactType, contact: string, channel?: Channel): RuleFactRow[] {
  const w = new Where().add('r.instance_id = ?', instanceId).add('r.contact = ?', contact).add('r.contact_type = ?', contactType);
  if (channel !== undefined) w.add('r.channel = ?', channel);
  return db.prepare(`SELECT r.id, r.event_id, r.channel, r.contact_type, r.contact, r.purpose_id, r.action, r.created_at, e.status AS event_status
      FROM consent_rules r JOIN consent_events e ON e.id = r.event_id ${w} ORDER BY r.id`).all(...w.params) as RuleFactRow[];
}
