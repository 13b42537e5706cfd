/**
 * The three suppression lists as the API and the CLI see them. A record is
 * {id, recipient, reason, source, mail_id, created_at}; the list is implied by the endpoint.
 * Addresses are kept in canonical form (normalizeEmail), the form the send path looks up.
 */
import type { Db } from '../store/db';
import * as store from '../store/suppressions';
import { mapPage, type Page, type PageRequest } from '../store/page';
import { ServiceError } from '../errors';
import { iso } from '../lib/time';
import { normalizeDomain, normalizeEmail } from '../lib/address';

export type SuppressionList = store.SuppressionList;
export const suppressionLists = store.suppressionLists;

export function presentSuppression(s: store.SuppressionRow) {
  return { id: s.id, recipient: s.recipient, reason: s.reason, source: s.source, mail_id: s.mail_id, created_at: iso(s.created_at) };
}
export type SuppressionObject = ReturnType<typeof presentSuppression>;

export function listSuppressions(db: Db, instanceId: number, list: SuppressionList, q: { recipient?: string }, p: PageRequest): Page<SuppressionObject> {
  return mapPage(store.listSuppressions(db, instanceId, list, { ...q, recipient: q.recipient === undefined ? undefined : canonicalNeedle(q.recipient) }, p), presentSuppression);
}

/**
 * Addresses are stored with their domain in ASCII form (x@xn--bcher-kva.test): a search written
 * with the domain as people write it (x@Bücher.test) is looked for in that form, as the mail
 * lists do for their recipient filter. A needle without a whole domain after its @ stays as is.
 */
function canonicalNeedle(needle: string): string {
  const at = needle.lastIndexOf('@');
  if (at === -1 || /^[\x00-\x7f]*$/.test(needle.slice(at + 1))) return needle;
  const domain = normalizeDomain(needle.slice(at + 1));
  return domain === null ? needle : `${needle.slice(0, at)}@${domain}`;
}

export function requireSuppression(db: Db, instanceId: number, list: SuppressionList, id: number): SuppressionObject {
  const s = store.getSuppression(db, instanceId, list, id);
  if (!s) throw new ServiceError('suppression_not_found', `Suppression ${id} does not exist on ${list}.`);
  return presentSuppression(s);
}

export function parseList(input: string | undefined): SuppressionList {
  const list = suppressionLists.find((l) => l === input);
  if (!list) {
    throw new ServiceError('validation_error', `--list must be one of ${suppressionLists.join(', ')}.`, {
      errors: [{ pointer: '/list', code: input === undefined ? 'missing' : 'enum', message: 'Input should be restrictions, unsubscribes or complaints', params: { expected: suppressionLists.join(', ') } }],
    });
  }
  return list;
}

function parseRecipient(input: string): string {
  const email = normalizeEmail(input);
  if (!email) throw new ServiceError('validation_error', `Invalid email address ${input}.`, { errors: [{ pointer: '/recipient', code: 'value_error.email', message: 'is not a valid email address' }] });
  return email;
}

/** Idempotent: an address already on the list keeps its first record, which is returned. */
export function addManualSuppression(db: Db, instanceId: number, v: { list: SuppressionList; recipient: string; reason?: string }, at: number): SuppressionObject {
  const recipient = parseRecipient(v.recipient);
  store.addSuppression(db, instanceId, { list: v.list, recipient, reason: v.reason ?? null, source: 'manual', at });
  const row = store.findOnList(db, instanceId, v.list, recipient);
  if (!row) throw new Error(`suppression of ${recipient} vanished after insert`);
  return presentSuppression(row);
}

export function removeManualSuppression(db: Db, instanceId: number, list: SuppressionList, input: string): SuppressionObject {
  const recipient = normalizeEmail(input) ?? input;
  const row = store.findOnList(db, instanceId, list, recipient);
  if (!row || !store.removeSuppression(db, instanceId, list, recipient)) throw new ServiceError('suppression_not_found', `${input} is not on ${list}.`);
  return presentSuppression(row);
}
