/**
 * The policy rules of a send, in the order they answer: sender registered (404), its domain
 * verified (409), sandbox relay (409), template usable (404/409), subscription and plan quota
 * (402). Reads the store only; writes nothing.
 */
import type { Db } from '../store/db';
import type { InstanceRow } from '../store/instances';
import { getDomain } from '../store/domains';
import { readFresh } from '../store/fresh';
import { findSenderByEmail } from '../senders/senders';
import { getTemplateForSend } from '../templates/templates';
import type { SenderRow } from '../store/senders';
import { ServiceError } from '../errors';
import { domainOf, isSandboxDomain } from '../lib/address';
import { iso } from '../lib/time';
import type { NormalizedSubmission } from './validate';

export interface ResolvedSender { row: SenderRow; isSandbox: boolean }

export function resolveSender(db: Db, instanceId: number, sub: NormalizedSubmission): ResolvedSender {
  // Both rows through the fresh cache (store/fresh.ts): keyed by the instance, never shared across tenants.
  const row = readFresh(db, `sender:${instanceId}:${sub.senderEmail}`, () => findSenderByEmail(db, instanceId, sub.senderEmail));
  if (!row) throw new ServiceError('sender_not_found', `Sender ${sub.senderEmail} is not a registered sender of this instance.`);
  const domain = readFresh(db, `domain:${instanceId}:${row.domain_id}`, () => getDomain(db, instanceId, row.domain_id));
  const isSandbox = domain?.is_sandbox === 1 || isSandboxDomain(domainOf(row.email_address));
  if (row.domain_is_verified !== 1) throw new ServiceError('domain_sender_not_verified', `The domain of sender ${row.email_address} is not verified.`);
  if (isSandbox) {
    const outside = sub.recipients.find((r) => !isSandboxDomain(domainOf(r.email)));
    if (outside) throw new ServiceError('sandbox_relay_restricted', `The sandbox sender ${row.email_address} may only send to *.sandbox.test recipients, not ${outside.email}.`);
  }
  return { row, isSandbox };
}

/** With template_id, the content is the template's at this instant (materialized at acceptance). */
export function materializeTemplate(db: Db, instanceId: number, sub: NormalizedSubmission): NormalizedSubmission {
  if (sub.templateId === null || sub.raw) return sub;
  const t = getTemplateForSend(db, instanceId, sub.templateId);
  if (!t) throw new ServiceError('mail_template_not_found', `Template ${sub.templateId} does not exist.`);
  if (t.status !== 'public' && !sub.testMode) throw new ServiceError('template_not_public', `Template ${sub.templateId} is a draft; publish it, or send with test_mode.`);
  return { ...sub, subject: t.subject ?? '', html: t.html ?? '', text: t.text };
}

export interface Cycle { start: number; resetAt: number }

/**
 * `reset_at` as shown: timestamps have whole seconds, and a cycle renews at the instance's
 * anchor to the millisecond, so the second is rounded up: a client waiting until reset_at finds
 * the new cycle (rounded down, it was refused again for up to 999 ms).
 */
export const resetAtIso = (cycle: Cycle): string => iso(Math.ceil(cycle.resetAt / 1000) * 1000);

export function currentCycle(instance: InstanceRow, at: number): Cycle {
  const length = instance.send_cycle_days * 86_400_000;
  const n = Math.max(0, Math.floor((at - instance.cycle_anchor_at) / length));
  const start = instance.cycle_anchor_at + n * length;
  return { start, resetAt: start + length };
}

export function usedInCycle(db: Db, instanceId: number, cycleStart: number): number {
  const r = db.prepare('SELECT sent FROM send_usage WHERE instance_id = ? AND cycle_start = ?').get(instanceId, cycleStart) as { sent: number } | undefined;
  return r?.sent ?? 0;
}

/** 402s: the subscription first, then whether `charged` more recipients fit in the cycle. */
export function checkPlan(db: Db, instance: InstanceRow, charged: number, at: number): Cycle {
  if (instance.subscription_active !== 1) throw new ServiceError('subscription_inactive', 'The instance has no active subscription.');
  const cycle = currentCycle(instance, at);
  if (instance.send_limit === null || charged === 0) return cycle;
  const used = usedInCycle(db, instance.id, cycle.start);
  const remaining = Math.max(0, instance.send_limit - used);
  if (charged > remaining) {
    throw new ServiceError('plan_send_limit_exceeded', `This send needs ${charged} of the plan's sends; ${remaining} remain in the current cycle.`, {
      limit: instance.send_limit, remaining, reset_at: resetAtIso(cycle),
    });
  }
  return cycle;
}
