/**
 * THE consent precedence (CONTRACT §6), one function shared by resolve and by the evaluation at
 * send so the two can never disagree. Pure: it sees rules, never the store.
 */
import type { RuleAction } from '../store/consent';

export type ConsentState = 'granted' | 'revoked' | 'no_record';
export type PurposeMode = 'opt_in' | 'opt_out';

export interface RuleFact { id: number; action: RuleAction; created_at: number; event_status: string }
export interface Decision<R extends RuleFact> { state: ConsentState; rule: R | null }

/**
 * A grant counts only when its event is confirmed (a pending double opt-in authorizes nothing,
 * an expired one no longer does); a revocation counts whatever its event's status, because
 * honouring a withdrawal never needs confirmation.
 */
export const ruleCounts = (r: RuleFact): boolean => r.action === 'deny' || r.event_status === 'confirmed';

/** One identifier's rules for one channel and purpose: the newest sets the state; same instant: deny wins. */
function decideOne<R extends RuleFact>(rules: R[]): R | null {
  let best: R | null = null;
  for (const r of rules) {
    if (!ruleCounts(r)) continue;
    if (!best || r.created_at > best.created_at) { best = r; continue; }
    if (r.created_at < best.created_at) continue;
    // Same instant: the rules apply together, so a deny beats an allow; else the later id.
    if ((r.action === 'deny' && best.action === 'allow') || (r.action === best.action && r.id > best.id)) best = r;
  }
  return best;
}

/**
 * The state for one channel and purpose. `groups` holds the rules of each identifier resolved
 * together (one group at send: the recipient's email address). Within a group the newest rule
 * wins; across groups the identifiers apply together, so a revocation on any of them wins over
 * a grant, and the newest deciding rule is reported.
 */
export function decide<R extends RuleFact>(groups: R[][]): Decision<R> {
  let revoked: R | null = null;
  let granted: R | null = null;
  for (const group of groups) {
    const r = decideOne(group);
    if (!r) continue;
    if (r.action === 'deny') { if (!revoked || r.created_at > revoked.created_at) revoked = r; }
    else if (!granted || r.created_at > granted.created_at) granted = r;
  }
  if (revoked) return { state: 'revoked', rule: revoked };
  if (granted) return { state: 'granted', rule: granted };
  return { state: 'no_record', rule: null };
}

/** The spec's table: opt_in sends only when granted; opt_out sends unless revoked. */
export function sendAllowed(mode: PurposeMode, state: ConsentState): boolean {
  return mode === 'opt_in' ? state === 'granted' : state !== 'revoked';
}
