/**
 * Consent evaluation at send (spec, "Consent evaluation at send"): for a sender that requires
 * consent, each recipient's email address is checked against every purpose the sender declares.
 * Only rules on channel mail for the email address count: a uniquecode revocation never blocks.
 */
import type { Db } from '../store/db';
import { rulesForContact, senderModes } from '../store/consent';
import { decide, sendAllowed } from './precedence';
import { comparableContact } from './contacts';

export type ConsentVerdict =
  | { allowed: true }
  | { allowed: false; purpose: string; reason: 'missing' | 'revoked'; detail: string };

export function evaluateConsent(db: Db, instanceId: number, senderId: number, email: string): ConsentVerdict {
  const modes = senderModes(db, instanceId, senderId);
  if (modes.length === 0) return { allowed: true };
  const rules = rulesForContact(db, instanceId, 'email_address', comparableContact('email_address', email), 'mail');
  // Every declared purpose must pass; the first failing one (by code) is the one reported.
  for (const m of modes) {
    const d = decide([rules.filter((r) => r.purpose_id === m.purpose_id)]);
    if (sendAllowed(m.mode, d.state)) continue;
    if (d.state === 'revoked' && d.rule) {
      return { allowed: false, purpose: m.code, reason: 'revoked',
        detail: `purpose ${m.code} (${m.mode}): explicit revocation (consent event ${d.rule.event_id}, rule ${d.rule.id})` };
    }
    return { allowed: false, purpose: m.code, reason: 'missing', detail: `purpose ${m.code} (${m.mode}): missing required consent` };
  }
  return { allowed: true };
}
