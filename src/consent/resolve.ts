/**
 * GET /v1/consent-rules/resolve: the consent that applies now to identifiers given as two lists
 * paired by position, per channel and purpose, decided by the same precedence the send uses,
 * plus every pair resolved together ("combined": a revocation on any identifier wins).
 */
import type { Db } from '../store/db';
import * as store from '../store/consent';
import { ServiceError } from '../errors';
import { iso } from '../lib/time';
import { decide, sendAllowed, type Decision } from './precedence';
import { channelsFor, comparableContact } from './contacts';
import { requirePurposeByCode } from './catalog';

export interface ResolveInput {
  contacts: string[];
  contactTypes: store.ContactType[];
  channel?: store.Channel;
  purposeId?: number;
  purposeCode?: string;
}

const verdict = (state: Decision<store.RuleFactRow>['state']) => ({
  opt_in: sendAllowed('opt_in', state) ? 'sent' : 'not_sent',
  opt_out: sendAllowed('opt_out', state) ? 'sent' : 'not_sent',
});

function presentDecision(channel: store.Channel, purpose: store.PurposeRow, d: Decision<store.RuleFactRow>, withVerdict: boolean) {
  const r = d.rule;
  return {
    channel,
    purpose_id: purpose.id,
    purpose_code: purpose.code,
    state: d.state,
    rule: r && { id: r.id, event_id: r.event_id, channel: r.channel, contact_type: r.contact_type, contact: r.contact, purpose_id: r.purpose_id, action: r.action, created_at: iso(r.created_at) },
    send_verdict: withVerdict ? verdict(d.state) : null,
  };
}

function selectPurposes(db: Db, instanceId: number, q: ResolveInput): store.PurposeRow[] {
  let list = store.allPurposes(db, instanceId);
  if (q.purposeId !== undefined) {
    list = list.filter((p) => p.id === q.purposeId);
    if (list.length === 0) throw new ServiceError('consent_purpose_not_found', `Purpose ${q.purposeId} does not exist.`);
  }
  if (q.purposeCode !== undefined) {
    const code = requirePurposeByCode(db, instanceId, q.purposeCode).code;
    // Both given, they must name one purpose: an empty answer would read as "no purposes".
    if (q.purposeId !== undefined && !list.some((p) => p.code === code)) {
      throw new ServiceError('malformed_request', `purpose ${q.purposeCode} and purpose_id ${q.purposeId} name different purposes.`);
    }
    list = list.filter((p) => p.code === code);
  }
  return list;
}

export function resolveConsent(db: Db, instanceId: number, q: ResolveInput, at: number) {
  if (q.contacts.length !== q.contactTypes.length) {
    throw new ServiceError('consent_contact_pairs_mismatch', `${q.contacts.length} contacts but ${q.contactTypes.length} contact types: the lists pair by position.`);
  }
  const purposes = selectPurposes(db, instanceId, q);
  // Per channel+purpose, the rules of each pair: the groups that "combined" resolves together.
  const together = new Map<string, { channel: store.Channel; purpose: store.PurposeRow; groups: store.RuleFactRow[][] }>();
  const results = q.contacts.map((raw, i) => {
    const type = q.contactTypes[i];
    const contact = comparableContact(type, raw);
    const rules = store.rulesForContact(db, instanceId, type, contact, q.channel);
    const chans = channelsFor(type).filter((c) => q.channel === undefined || c === q.channel);
    const decisions = chans.flatMap((channel) => purposes.map((purpose) => {
      const group = rules.filter((r) => r.channel === channel && r.purpose_id === purpose.id);
      const key = `${channel}\u0000${purpose.id}`;
      const entry = together.get(key) ?? { channel, purpose, groups: [] };
      entry.groups.push(group);
      together.set(key, entry);
      // Only an email address on channel mail is what a send evaluates.
      return presentDecision(channel, purpose, decide([group]), type === 'email_address' && channel === 'mail');
    }));
    return { contact, contact_type: type, decisions };
  });
  const combined = [...together.values()].map((e) => presentDecision(e.channel, e.purpose, decide(e.groups), false));
  return { resolved_at: iso(at), results, combined };
}
