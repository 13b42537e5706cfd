/**
 * Senders: an address at one of the instance's domains. A sender can only be created on a
 * verified domain; `domain_is_verified` is recomputed from the domain row on every read.
 */
import type { Db } from '../store/db';
import { containsText } from '../store/db';
import { listPage, Where, type Page, type PageRequest } from '../store/page';
import { domainVerifiedSql, findDomainByName } from '../store/domains';
import * as store from '../store/senders';
import { ServiceError } from '../errors';
import { iso } from '../lib/time';
import { domainOf, normalizeEmail } from '../lib/address';

const selectSender = `s.*, ${domainVerifiedSql('d')} AS domain_is_verified`;
const fromSenders = 'FROM senders s JOIN domains d ON d.id = s.domain_id';

export function presentSender(s: store.SenderRow) {
  return {
    id: s.id,
    name: s.name,
    email_address: s.email_address,
    domain_id: s.domain_id,
    domain_is_verified: s.domain_is_verified === 1,
    is_consent_required: s.is_consent_required === 1,
    created_at: iso(s.created_at),
    updated_at: iso(s.updated_at),
  };
}
export type SenderObject = ReturnType<typeof presentSender>;

export interface SenderFilter { name?: string; email?: string; is_domain_verified?: boolean }

export function listSenders(db: Db, instanceId: number, q: SenderFilter, p: PageRequest): Page<store.SenderRow> {
  const w = new Where().add('s.instance_id = ?', instanceId).add('d.deleted_at IS NULL');
  if (q.name !== undefined) w.add(...containsText('s.name', q.name));
  if (q.email !== undefined) w.add(...containsText('s.email_address', q.email));
  if (q.is_domain_verified !== undefined) w.add(`${domainVerifiedSql('d')} = ?`, q.is_domain_verified ? 1 : 0);
  return listPage<store.SenderRow>(db, { select: selectSender, from: `${fromSenders} ${w}`, params: w.params, orderBy: 's.id' }, p);
}

export function getSender(db: Db, instanceId: number, id: number): store.SenderRow | undefined {
  return db.prepare(`SELECT ${selectSender} ${fromSenders} WHERE s.instance_id = ? AND s.id = ? AND d.deleted_at IS NULL`).get(instanceId, id) as store.SenderRow | undefined;
}

export function requireSender(db: Db, instanceId: number, id: number): store.SenderRow {
  const s = getSender(db, instanceId, id);
  if (!s) throw new ServiceError('sender_not_found', `Sender ${id} does not exist.`);
  return s;
}

/**
 * Case-insensitive on the whole address: `News@` and `news@` are one mailbox to every provider
 * that matters, so they are one sender (lookup at send time and uniqueness at creation alike).
 */
export function findSenderByEmail(db: Db, instanceId: number, email: string): store.SenderRow | undefined {
  return db.prepare(`SELECT ${selectSender} ${fromSenders} WHERE s.instance_id = ? AND s.email_address = ? COLLATE NOCASE AND d.deleted_at IS NULL`).get(instanceId, email) as store.SenderRow | undefined;
}

export function requireSenderByEmail(db: Db, instanceId: number, input: string): store.SenderRow {
  const email = normalizeEmail(input) ?? input;
  const s = findSenderByEmail(db, instanceId, email);
  if (!s) throw new ServiceError('sender_not_found', `Sender ${input} does not exist.`);
  return s;
}

export function parseSenderEmail(input: string): string {
  const email = normalizeEmail(input);
  if (!email) {
    throw new ServiceError('validation_error', 'Invalid email address.', { errors: [{ pointer: '/email_address', code: 'value_error.email', message: 'is not a valid email address' }] });
  }
  return email;
}

export function addSender(db: Db, instanceId: number, v: { email: string; name?: string }, at: number, limit: number | null): store.SenderRow {
  const email = parseSenderEmail(v.email);
  const domain = findDomainByName(db, instanceId, domainOf(email));
  // CONTRACT §3: sender add fails with domain_not_verified unless the domain is verified.
  if (!domain) throw new ServiceError('domain_not_verified', `Domain ${domainOf(email)} is not registered; add it and verify it first.`);
  const verified = [domain.mx_status, domain.spf_status, domain.dkim_status, domain.dmarc_status].every((s) => s === 'verified');
  if (!verified) throw new ServiceError('domain_not_verified', `Domain ${domain.domain} is not verified.`);
  if (findSenderByEmail(db, instanceId, email)) throw new ServiceError('sender_already_exists', `Sender ${email} already exists.`);
  if (limit !== null) {
    const usage = store.quotaSenderCount(db, instanceId);
    if (usage >= limit) {
      throw new ServiceError('plan_senders_limit_exceeded', 'The plan quota of active senders is reached.', { limit, usage, remaining: Math.max(0, limit - usage) });
    }
  }
  const id = store.insertSender(db, instanceId, { domainId: domain.id, name: v.name ?? email.slice(0, email.indexOf('@')), email, at });
  return requireSender(db, instanceId, id);
}
