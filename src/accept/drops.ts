/**
 * Recipients accepted with 200 but dropped at once (spec, Mail delivery status), not charged:
 * attachments over the instance's functional limit (every recipient), an address on a
 * suppression list, or consent missing or revoked when the sender requires it (not in test mode).
 */
import type { Db } from '../store/db';
import type { InstanceRow } from '../store/instances';
import type { SenderRow } from '../store/senders';
import { findSuppression } from '../store/suppressions';
import { evaluateConsent } from '../consent/evaluate';
import { limits, type NormalizedSubmission } from './validate';

/** One entry per recipient (same order): null to queue it, else the reason written to its log. */
export function dropReasons(db: Db, instance: InstanceRow, sender: SenderRow, sub: NormalizedSubmission): (string | null)[] {
  // Over SMTP the technical limits (spec, Limits) cannot refuse a request the way a 422 does:
  // "excess attachments end in dropped" (POST /v1/mails/send rule 7), whatever the functional limit.
  if (sub.attachmentCount > limits.attachments || sub.attachmentBytes > limits.attachmentBytes) {
    const reason = `${sub.attachmentCount} attachments weighing ${sub.attachmentBytes} bytes, over the technical limits of ${limits.attachments} attachments and ${limits.attachmentBytes} bytes decoded`;
    return sub.recipients.map(() => reason);
  }
  if (sub.attachmentBytes > instance.attachment_max_bytes) {
    const reason = `attachments weigh ${sub.attachmentBytes} bytes, over the instance's functional limit of ${instance.attachment_max_bytes} bytes`;
    return sub.recipients.map(() => reason);
  }
  const checkConsent = sender.is_consent_required === 1 && !sub.testMode;
  return sub.recipients.map((r) => {
    const s = findSuppression(db, instance.id, r.email);
    if (s) return `recipient is on the ${s.list} list${s.reason ? `: ${s.reason}` : ''}`;
    if (!checkConsent) return null;
    const verdict = evaluateConsent(db, instance.id, sender.id, r.email);
    return verdict.allowed ? null : `consent: ${verdict.detail}`;
  });
}
