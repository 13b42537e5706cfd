/**
 * Consent events (spec, POST/GET /v1/consent-events): the append-only history. Registering checks,
 * in this order (after the route's JSON Schema 422): the term (404, inactive 409, no current
 * version 409), the rules against each other (type/channel mismatch 409, duplicate
 * channel+purpose 409), then every value problem at once (422: unknown purpose_id, invalid email).
 */
import type { Db } from '../store/db';
import * as store from '../store/consent';
import type { Page, PageRequest } from '../store/page';
import { ServiceError, validationError, type FieldError } from '../errors';
import { iso } from '../lib/time';
import { requireTerm } from './catalog';
import { canonicalEmail, typeFitsChannel } from './contacts';

export interface RuleInput { channel?: store.Channel; contact_type: store.ContactType; contact: string; purpose_id: number; action: store.RuleAction }
export interface EventInput { term_id: number; method: 'single_opt_in' | 'double_opt_in'; rules: RuleInput[] }

function presentRule(r: store.RuleRow) {
  return { id: r.id, channel: r.channel, contact_type: r.contact_type, contact: r.contact, purpose_id: r.purpose_id, action: r.action, created_at: iso(r.created_at) };
}

function presentEvents(db: Db, instanceId: number, rows: store.EventRow[]) {
  const rules = store.rulesOfEvents(db, instanceId, rows.map((e) => e.id));
  return rows.map((e) => ({
    id: e.id,
    term_id: e.term_id,
    term_version_id: e.term_version_id,
    status: e.status,
    method: e.method,
    source: e.source,
    confirmed_at: iso(e.confirmed_at),
    expired_at: iso(e.expired_at),
    created_at: iso(e.created_at),
    rules: (rules.get(e.id) ?? []).map(presentRule),
  }));
}
export type EventObject = ReturnType<typeof presentEvents>[number];

export function getEvent(db: Db, instanceId: number, id: number): EventObject {
  const e = store.findEvent(db, instanceId, id);
  if (!e) throw new ServiceError('consent_event_not_found', `Consent event ${id} does not exist.`);
  return presentEvents(db, instanceId, [e])[0];
}

export function listEvents(db: Db, instanceId: number, q: store.EventFilter, p: PageRequest): Page<EventObject> {
  const page = store.listEvents(db, instanceId, q, p);
  return { ...page, items: presentEvents(db, instanceId, page.items) };
}

/**
 * Field-level checks the schema cannot express: the purpose exists, the email is an address.
 * Returns the rules with their 422 items, thrown by the caller after the spec's 404 and 409
 * answers, which judge the request's meaning and are what a client switches on.
 */
function normalizeRules(db: Db, instanceId: number, rules: RuleInput[]): { rules: store.NewRule[]; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const out = rules.map((r, i): store.NewRule => {
    if (!store.findPurpose(db, instanceId, r.purpose_id)) {
      errors.push({ pointer: `/rules/${i}/purpose_id`, code: 'value_error.purpose_not_found', message: `Purpose ${r.purpose_id} does not exist in the account`, params: { purpose_id: r.purpose_id } });
    }
    let contact = r.contact;
    if (r.contact_type === 'email_address') {
      const email = canonicalEmail(r.contact);
      if (email === null) errors.push({ pointer: `/rules/${i}/contact`, code: 'value_error.email', message: 'is not a valid email address' });
      contact = email ?? contact;
    }
    return { channel: r.channel ?? 'mail', contactType: r.contact_type, contact, purposeId: r.purpose_id, action: r.action };
  });
  return { rules: out, errors };
}

function checkRuleSet(rules: store.NewRule[]): void {
  rules.forEach((r, i) => {
    if (!typeFitsChannel(r.contactType, r.channel)) {
      throw new ServiceError('consent_contact_type_channel_mismatch', `Rule ${i}: identifier type ${r.contactType} does not fit channel ${r.channel}.`, { pointer: `/rules/${i}` });
    }
  });
  const seen = new Map<string, number>();
  rules.forEach((r, i) => {
    const key = `${r.channel}\u0000${r.purposeId}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw new ServiceError('consent_duplicate_rule', `Rules ${first} and ${i} are both for channel ${r.channel} and purpose ${r.purposeId}.`, { pointer: `/rules/${i}` });
    }
    seen.set(key, i);
  });
}

/** Registers a consent obtained by the integrator: confirmed, source api, the term's current version. */
export function registerEvent(db: Db, instanceId: number, input: EventInput, at: number): EventObject {
  // One IMMEDIATE transaction: the term's current version cannot change between check and insert.
  return db.transaction(() => {
    const term = requireTerm(db, instanceId, input.term_id);
    if (term.is_active !== 1) throw new ServiceError('consent_term_inactive', `Consent term ${term.id} is inactive.`);
    const version = store.currentVersion(db, instanceId, term.id);
    if (!version) throw new ServiceError('consent_term_no_current_version', `Consent term ${term.id} has no current version.`);
    const { rules, errors } = normalizeRules(db, instanceId, input.rules);
    checkRuleSet(rules);
    if (errors.length) throw validationError(errors);
    const id = store.insertEvent(db, instanceId, { termId: term.id, termVersionId: version.id, status: 'confirmed', method: input.method, source: 'api', confirmedAt: at, at, rules });
    return getEvent(db, instanceId, id);
  }).immediate();
}
